# A ZeRO stage of 2^32 + 1 once became stage 1 when cut to 32 bits; it is a range error.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 2, zero: 4294967297}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.zero'
trainsim run s.yaml

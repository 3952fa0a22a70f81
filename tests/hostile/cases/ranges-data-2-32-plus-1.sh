# 2^32 + 1 GPUs of data parallelism once wrapped to one rank and "fit" with no communication.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 4294967297}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.data' '1\.\.1048576'
trainsim run s.yaml

# Each degree is in range, but data x tensor x pipeline is above the 2^24 devices simulated.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 1048576, tensor: 1048576}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel' '16777216'
trainsim run s.yaml

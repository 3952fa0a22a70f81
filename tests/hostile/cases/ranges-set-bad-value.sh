# A bad --set value is located in the argument, at the value's column.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 '^error: --set training\.micro_batch=abc:1:22' 'training\.micro_batch'
trainsim run s.yaml --set training.micro_batch=abc

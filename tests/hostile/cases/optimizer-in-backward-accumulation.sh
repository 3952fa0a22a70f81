# optimizer_in_backward consumes each gradient as it is made: accumulation is refused there.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training:
  micro_batch: 1
  gradient_accumulation: 4
  seq_len: 128
  optimizer_in_backward: true
YAML
expect 2 's\.yaml:8:[0-9]+' 'training\.optimizer_in_backward' 'gradient_accumulation must be 1'
trainsim run s.yaml

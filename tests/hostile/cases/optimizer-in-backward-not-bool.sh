# optimizer_in_backward takes a boolean, not a word.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  optimizer_in_backward: sometimes
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.optimizer_in_backward'
trainsim run s.yaml

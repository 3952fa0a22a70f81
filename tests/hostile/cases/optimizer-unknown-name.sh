# An optimizer name trainsim does not know is refused at the value, listing the new ones.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  optimizer: adamw8bit
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.optimizer' 'adamw-8bit' 'adafactor'
trainsim run s.yaml

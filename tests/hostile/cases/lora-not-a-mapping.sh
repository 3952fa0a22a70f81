# training.lora must be a mapping; a bare rank is refused with the mapping expected.
file s.yaml <<'YAML'
name: t
model: llama2-7b
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  lora: 8
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.lora' 'mapping'
trainsim run s.yaml

# Hugging Face's Adafactor has one implementation (a loop over the tensors): foreach is refused.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  precision: fp32
  optimizer: adafactor
  optimizer_impl: foreach
YAML
expect 2 's\.yaml:9:[0-9]+' 'training\.optimizer_impl' 'adafactor has one implementation, for-loop'
trainsim run s.yaml

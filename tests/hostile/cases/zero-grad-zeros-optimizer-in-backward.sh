# optimizer_in_backward frees each gradient in its hook: zero_grad: zeros contradicts it.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  optimizer_in_backward: true
  zero_grad: zeros
YAML
expect 2 's\.yaml:8:[0-9]+' 'training\.zero_grad' 'optimizer_in_backward'
trainsim run s.yaml

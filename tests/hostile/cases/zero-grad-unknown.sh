# training.zero_grad is set_to_none or zeros; a boolean (PyTorch's argument) is refused with the list.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  zero_grad: true
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.zero_grad' 'set_to_none \| zeros'
trainsim run s.yaml

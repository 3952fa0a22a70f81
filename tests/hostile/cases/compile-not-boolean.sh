# compile takes true or false; "max-autotune" (a torch.compile mode) is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  loss_chunks: 1
  compile: max-autotune
YAML
expect 2 's\.yaml:8:[0-9]+' 'training\.compile'
trainsim run s.yaml

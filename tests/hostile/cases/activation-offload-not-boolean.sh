# activation_offload takes true or false; a word like "yes please" is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  activation_offload: yes please
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.activation_offload'
trainsim run s.yaml

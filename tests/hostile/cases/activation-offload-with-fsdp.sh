# Activation offload with FSDP is not modelled: refused at the key.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  activation_offload: true
parallel:
  data: 2
  fsdp: true
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.activation_offload' 'parallel\.fsdp'
trainsim run s.yaml

# Activation offload under pipeline parallelism is not modelled: refused at the key, naming why.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  gradient_accumulation: 4
  seq_len: 128
  activation_offload: true
parallel:
  pipeline: 2
YAML
expect 2 's\.yaml:8:[0-9]+' 'training\.activation_offload' 'pipeline parallelism'
trainsim run s.yaml

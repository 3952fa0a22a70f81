# Adafactor runs on the GPU: optimizer offload (DeepSpeed's CPU Adam) is refused with it.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  optimizer: adafactor
  offload: {optimizer: cpu}
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.optimizer' 'offload'
trainsim run s.yaml

# fp8 attention (Transformer Engine's fp8_dpa) under a precision that quantizes nothing is refused.
file s.yaml <<'YAML'
model: gpt2
device: h100-80gb
training:
  micro_batch: 1
  seq_len: 1024
  attention: flash
  fp8_attention: true
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.fp8_attention' 'precision: fp8'
trainsim run s.yaml

# A step's fp8 weight cache under a precision that quantizes nothing is refused.
file s.yaml <<'YAML'
model: gpt2
device: h100-80gb
training:
  micro_batch: 1
  seq_len: 1024
  precision: bf16
  fp8_weight_cache: step
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.fp8_weight_cache' 'precision is bf16'
trainsim run s.yaml

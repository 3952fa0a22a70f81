# training.fp8_weight_cache takes microbatch or step.
file s.yaml <<'YAML'
model: gpt2
device: h100-80gb
training:
  micro_batch: 1
  seq_len: 1024
  precision: fp8
  fp8_weight_cache: always
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.fp8_weight_cache' 'microbatch'
trainsim run s.yaml

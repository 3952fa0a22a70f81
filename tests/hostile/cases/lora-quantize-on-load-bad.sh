# An unknown quantize_on_load value is refused with the values allowed.
file s.yaml <<'YAML'
name: t
model: llama2-7b
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  lora: {rank: 8, targets: all-linear, base: nf4, quantize_on_load: chunked}
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.quantize_on_load' 'none \| whole'
trainsim run s.yaml

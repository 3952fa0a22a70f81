# quantize_on_load: whole models torchao's NF4 quantization: a bf16 base is refused.
file s.yaml <<'YAML'
name: t
model: llama2-7b
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  lora: {rank: 8, targets: all-linear, base: bf16, quantize_on_load: whole}
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.quantize_on_load' 'nf4 or nf4-dq'
trainsim run s.yaml

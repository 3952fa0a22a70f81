# quantize_on_load: whole models torchao's NF4 quantization: a bf16 base is refused.
training_scenario llama2-7b 'lora: {rank: 8, targets: all-linear, base: bf16, quantize_on_load: whole}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.quantize_on_load' 'nf4 or nf4-dq'
trainsim run s.yaml

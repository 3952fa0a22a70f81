# An unknown quantize_on_load value is refused with the values allowed.
training_scenario llama2-7b 'lora: {rank: 8, targets: all-linear, base: nf4, quantize_on_load: chunked}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.quantize_on_load' 'none \| whole'
trainsim run s.yaml

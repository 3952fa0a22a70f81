# An unknown quantizer is refused with the libraries allowed.
training_scenario llama2-7b 'lora: {rank: 8, targets: all-linear, base: nf4, quantizer: gptq}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.quantizer' 'torchao \| bitsandbytes'
trainsim run s.yaml

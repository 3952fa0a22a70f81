# A quantizer without a 4-bit base is refused where it is written.
training_scenario llama2-7b 'lora: {rank: 8, targets: all-linear, quantizer: bitsandbytes}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.quantizer' 'needs base: nf4 or nf4-dq'
trainsim run s.yaml

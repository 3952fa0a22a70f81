# An unknown base format (fp4 is not modelled) is refused with the formats allowed.
training_scenario 'llama2-7b' 'lora: {rank: 8, targets: all-linear, base: fp4}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.base' 'nf4 \| nf4-dq \| int8 \| bf16'
trainsim run s.yaml

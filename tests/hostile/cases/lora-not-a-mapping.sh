# training.lora must be a mapping; a bare rank is refused with the mapping expected.
training_scenario 'llama2-7b' 'lora: 8'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora' 'mapping'
trainsim run s.yaml

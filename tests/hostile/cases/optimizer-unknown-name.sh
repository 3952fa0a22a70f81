# An optimizer name trainsim does not know is refused at the value, listing the new ones.
training_scenario '{preset: gpt2, layers: 2}' 'optimizer: adamw8bit'
expect 2 's\.yaml:7:[0-9]+' 'training\.optimizer' 'adamw-8bit' 'adafactor'
trainsim run s.yaml

# training.optimizer_states is eager or lazy; a boolean is refused with the list.
training_scenario '{preset: gpt2, layers: 2}' 'precision: fp32' 'optimizer_states: true'
expect 2 's\.yaml:8:[0-9]+' 'training\.optimizer_states' 'eager \| lazy'
trainsim run s.yaml

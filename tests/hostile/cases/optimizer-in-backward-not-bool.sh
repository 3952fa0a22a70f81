# optimizer_in_backward takes a boolean, not a word.
training_scenario '{preset: gpt2, layers: 2}' 'optimizer_in_backward: sometimes'
expect 2 's\.yaml:7:[0-9]+' 'training\.optimizer_in_backward'
trainsim run s.yaml

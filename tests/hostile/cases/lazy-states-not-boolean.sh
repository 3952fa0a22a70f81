# training.lazy_states takes true or false; a word is refused at the value.
training_scenario '{preset: gpt2, layers: 2}' 'lazy_states: first-step'
expect 2 's\.yaml:7:[0-9]+' 'training\.lazy_states'
trainsim run s.yaml

# activation_offload takes true or false; a word like "yes please" is refused at the value.
training_scenario 'gpt2' 'activation_offload: yes please'
expect 2 's\.yaml:7:[0-9]+' 'training\.activation_offload'
trainsim run s.yaml

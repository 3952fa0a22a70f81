# modules is one name, not a list of them.
training_scenario gpt2 'modules: [eager, fused]'
expect 2 's\.yaml:7:[0-9]+' 'training\.modules'
trainsim run s.yaml

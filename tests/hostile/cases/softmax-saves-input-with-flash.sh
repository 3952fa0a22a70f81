# softmax_saves_input keeps the standard attention's scores; flash attention has none: refused.
training_scenario '{preset: gpt2, layers: 2}' 'attention: flash' 'softmax_saves_input: true'
expect 2 's\.yaml:8:[0-9]+' 'training\.softmax_saves_input' 'flash'
trainsim run s.yaml

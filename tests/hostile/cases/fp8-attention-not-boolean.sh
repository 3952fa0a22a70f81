# training.fp8_attention takes true or false; a recipe's name is refused at the value.
training_scenario '{preset: gpt2, layers: 2}' 'fp8_attention: fp8_dpa'
expect 2 's\.yaml:7:[0-9]+' 'training\.fp8_attention'
trainsim run s.yaml

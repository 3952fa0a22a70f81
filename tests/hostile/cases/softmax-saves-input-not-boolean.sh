# training.softmax_saves_input takes true or false; a PyTorch version is refused at the value.
training_scenario '{preset: gpt2, layers: 2}' 'softmax_saves_input: "1.10"'
expect 2 's\.yaml:7:[0-9]+' 'training\.softmax_saves_input'
trainsim run s.yaml

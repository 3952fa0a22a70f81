# training.zero_grad is set_to_none or zeros; a boolean (PyTorch's argument) is refused with the list.
training_scenario '{preset: gpt2, layers: 2}' 'zero_grad: true'
expect 2 's\.yaml:7:[0-9]+' 'training\.zero_grad' 'set_to_none \| zeros'
trainsim run s.yaml

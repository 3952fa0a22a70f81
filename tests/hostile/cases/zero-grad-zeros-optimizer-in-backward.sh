# optimizer_in_backward frees each gradient in its hook: zero_grad: zeros contradicts it.
training_scenario '{preset: gpt2, layers: 2}' 'optimizer_in_backward: true' 'zero_grad: zeros'
expect 2 's\.yaml:8:[0-9]+' 'training\.zero_grad' 'optimizer_in_backward'
trainsim run s.yaml

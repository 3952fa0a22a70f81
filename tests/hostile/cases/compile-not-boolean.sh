# compile takes true or false; "max-autotune" (a torch.compile mode) is refused at the value.
training_scenario 'gpt2' 'loss_chunks: 1' 'compile: max-autotune'
expect 2 's\.yaml:8:[0-9]+' 'training\.compile'
trainsim run s.yaml

# A fractional or textual loss_chunks is refused at the value, not truncated.
training_scenario 'gpt2' 'loss_chunks: 2.5'
expect 2 's\.yaml:7:[0-9]+' 'training\.loss_chunks'
trainsim run s.yaml

# A loss_chunks past 2^20 is refused with the range, never wraps.
training_scenario 'gpt2' 'loss_chunks: 99999999999999999999'
expect 2 's\.yaml:7:[0-9]+' 'training\.loss_chunks'
trainsim run s.yaml

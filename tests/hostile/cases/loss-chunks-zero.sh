# loss_chunks 0 is refused at the value with the allowed range, not read as "unchunked".
training_scenario 'gpt2' 'loss_chunks: 0'
expect 2 's\.yaml:7:[0-9]+' 'training\.loss_chunks' '1\.\.1048576'
trainsim run s.yaml

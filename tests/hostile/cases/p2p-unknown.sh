# parallel.p2p names an exchange trainsim does not model: refused at the value, listing the two
# it does.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  pipeline: 2' \
  '  p2p: blocking'
expect 2 's\.yaml:10:[0-9]+' 'parallel\.p2p' 'async' 'sync'
trainsim run s.yaml

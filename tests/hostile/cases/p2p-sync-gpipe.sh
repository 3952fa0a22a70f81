# parallel.p2p: sync plays Megatron-LM's exchanges, which Megatron-LM has for 1F1B and the
# interleaved schedule only: with GPipe it is refused at the p2p key, naming the schedules.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  pipeline: 2' \
  '  schedule: gpipe' '  p2p: sync'
expect 2 's\.yaml:11:[0-9]+' 'parallel\.p2p' '1f1b' 'interleaved'
trainsim run s.yaml

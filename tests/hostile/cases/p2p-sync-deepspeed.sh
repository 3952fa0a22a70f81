# parallel.p2p: sync is Megatron-LM's exchange; DeepSpeed's pipeline engine blocks its transfers
# its own way, so the pair is refused at the p2p key, naming the value to use.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  pipeline: 2' \
  '  pipeline_engine: deepspeed' '  p2p: sync'
expect 2 's\.yaml:11:[0-9]+' 'parallel\.p2p' 'p2p: async'
trainsim run s.yaml

# Megatron-Core's --overlap-param-gather overlaps ZeRO-1/2's weight all-gather; without ZeRO
# nothing is gathered: refused at parallel.param_gather.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  data: 2' \
  '  param_gather: overlapped'
expect 2 's\.yaml:10:[0-9]+' 'parallel\.param_gather' 'parallel\.zero 1 or 2'
trainsim run s.yaml

# parallel.param_gather names a schedule trainsim does not model: refused at the value, listing
# the two it does.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  data: 2' '  zero: 1' \
  '  param_gather: prefetch'
expect 2 's\.yaml:11:[0-9]+' 'parallel\.param_gather' 'after_step' 'overlapped'
trainsim run s.yaml

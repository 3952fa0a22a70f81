# parallel.grad_reduce names a reduction trainsim does not model: refused at the value, listing
# the three it does.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  data: 2' \
  '  grad_reduce: blocking'
expect 2 's\.yaml:10:[0-9]+' 'parallel\.grad_reduce' 'overlapped' 'after_backward' 'after_backward_in_place'
trainsim run s.yaml

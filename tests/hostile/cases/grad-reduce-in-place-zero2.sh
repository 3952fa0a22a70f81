# Megatron-Core's DDP without --overlap-grad-reduce reduces each chunk's gradient buffer once per
# step; ZeRO-2 reduce-scatters every micro-batch: the pair is refused at parallel.grad_reduce.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  data: 2' '  zero: 2' \
  '  grad_reduce: after_backward_in_place'
expect 2 's\.yaml:11:[0-9]+' 'parallel\.grad_reduce' 'ZeRO stage 2'
trainsim run s.yaml

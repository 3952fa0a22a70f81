# Megatron-LM's local DDP all-reduces whole gradients after the backward; ZeRO-1 reduce-scatters
# them: the pair is refused at parallel.grad_reduce.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  data: 2' '  zero: 1' \
  '  grad_reduce: after_backward'
expect 2 's\.yaml:11:[0-9]+' 'parallel\.grad_reduce' 'ZeRO stage 1'
trainsim run s.yaml

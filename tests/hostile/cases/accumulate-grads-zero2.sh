# ZeRO-2 reduces every micro-batch's gradients: an accumulation pass over the step's is refused.
training_scenario gpt2 'gradient_accumulation: 4' 'accumulate_grads: autograd' -- 'parallel:' \
  '  data: 2' '  zero: 2'
expect 2 's\.yaml:8:[0-9]+' 'training\.accumulate_grads' 'ZeRO stage 2'
trainsim run s.yaml

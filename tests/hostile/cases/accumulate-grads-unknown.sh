# training.accumulate_grads takes fused, autograd, fp32 or fused-fp32; anything else is refused at the value.
training_scenario gpt2 'accumulate_grads: fp64'
expect 2 's\.yaml:7:[0-9]+' 'training\.accumulate_grads' 'fp32'
trainsim run s.yaml

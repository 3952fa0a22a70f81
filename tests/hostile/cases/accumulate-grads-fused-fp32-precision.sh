# accumulate_grads: fused-fp32 keeps fp32 main gradients beside 16-bit weights (Megatron-Core):
# bf16-true training has no fp32 gradient buffer.
training_scenario gpt2 'precision: bf16-true' 'accumulate_grads: fused-fp32'
expect 2 's\.yaml:8:[0-9]+' 'training\.accumulate_grads' 'fp16, bf16 or fp8'
trainsim run s.yaml

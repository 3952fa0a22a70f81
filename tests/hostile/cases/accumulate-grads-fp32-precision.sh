# accumulate_grads: fp32 adds 16-bit gradients into an fp32 copy: fp32 training has none.
training_scenario gpt2 'precision: fp32' 'accumulate_grads: fp32'
expect 2 's\.yaml:8:[0-9]+' 'training\.accumulate_grads' 'fp16 or bf16'
trainsim run s.yaml

# model_init: cloned-layer plays a whole block built on the GPU; ZeRO-3 partitions the
# parameters as they are built: refused.
training_scenario llama2-7b 'precision: bf16-true' 'model_init: cloned-layer' -- 'parallel:' '  data: 2' '  zero: 3'
expect 2 's\.yaml:8:[0-9]+' 'training\.model_init' 'ZeRO-3'
trainsim run s.yaml

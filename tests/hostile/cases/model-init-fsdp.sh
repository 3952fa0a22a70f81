# model_init: cloned-layer plays a whole block built on the GPU; FSDP builds shards: refused.
training_scenario llama2-7b 'precision: bf16-true' 'model_init: cloned-layer' -- 'parallel:' '  data: 2' '  fsdp: true'
expect 2 's\.yaml:8:[0-9]+' 'training\.model_init' 'parallel\.fsdp'
trainsim run s.yaml

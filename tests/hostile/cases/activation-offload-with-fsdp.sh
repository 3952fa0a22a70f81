# Activation offload with FSDP is not modelled: refused at the key.
training_scenario 'gpt2' 'activation_offload: true' -- 'parallel:' '  data: 2' '  fsdp: true'
expect 2 's\.yaml:7:[0-9]+' 'training\.activation_offload' 'parallel\.fsdp'
trainsim run s.yaml

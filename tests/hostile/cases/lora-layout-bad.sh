# An unknown adapter layout is refused with the layouts allowed.
training_scenario llama2-7b 'lora: {rank: 8, targets: [q, v], layout: fused}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.layout' 'separate \| fused-qkv'
trainsim run s.yaml

# Adafactor runs on the GPU: optimizer offload (DeepSpeed's CPU Adam) is refused with it.
training_scenario '{preset: gpt2, layers: 2}' 'optimizer: adafactor' 'offload: {optimizer: cpu}'
expect 2 's\.yaml:7:[0-9]+' 'training\.optimizer' 'offload'
trainsim run s.yaml

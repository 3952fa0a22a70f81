# optimizer_states: lazy models one or two buffers shaped as the parameter: Adafactor is refused.
training_scenario '{preset: gpt2, layers: 2}' 'precision: fp32' 'optimizer: adafactor' 'optimizer_states: lazy'
expect 2 's\.yaml:9:[0-9]+' 'training\.optimizer_states' 'adam, adamw, momentum and lion'
trainsim run s.yaml

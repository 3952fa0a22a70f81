# lazy_states plays one device's first step with unsharded states; ZeRO flattens its states
# into buffers allocated before training: refused at the key.
training_scenario '{preset: gpt2, layers: 2}' 'lazy_states: true' -- 'parallel: {data: 2, zero: 1}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lazy_states' 'zero 0'
trainsim run s.yaml

# Paged optimizer states live in unified memory, outside the caching allocator: lazy_states,
# which is about the allocator's segments, is refused for them.
training_scenario '{preset: gpt2, layers: 2}' 'optimizer: paged-adamw' 'lazy_states: true'
expect 2 's\.yaml:8:[0-9]+' 'training\.lazy_states' 'paged'
trainsim run s.yaml

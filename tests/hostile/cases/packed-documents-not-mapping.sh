# training.packed_documents is a mapping {length} or {lengths}; a bare number is refused at it.
training_scenario '{preset: gpt2, layers: 2}' 'attention: flash' 'packed_documents: 64'
expect 2 's\.yaml:8:[0-9]+' 'training\.packed_documents' 'length'
trainsim run s.yaml

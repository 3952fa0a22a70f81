# training.packed_documents takes one of length and lengths, not both.
training_scenario '{preset: gpt2, layers: 2}' 'attention: flash' 'packed_documents: {length: 64, lengths: [64, 64]}'
expect 2 's\.yaml:8:[0-9]+' 'training\.packed_documents' 'exactly one of length and lengths'
trainsim run s.yaml

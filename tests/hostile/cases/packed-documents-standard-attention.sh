# Per-document attention runs in variable-length flash kernels: standard attention is refused.
training_scenario '{preset: gpt2, layers: 2}' 'attention: standard' 'packed_documents: {length: 64}'
expect 2 's\.yaml:8:[0-9]+' 'training\.packed_documents' 'attention: flash'
trainsim run s.yaml

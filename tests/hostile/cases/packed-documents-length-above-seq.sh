# A document longer than the packed sequence (seq_len 128) is refused at length.
training_scenario '{preset: gpt2, layers: 2}' 'attention: flash' 'packed_documents:' '  length: 4096'
expect 2 's\.yaml:9:[0-9]+' 'training\.packed_documents\.length' 'does not fit'
trainsim run s.yaml

# The documents of one pack must fill the sequence (seq_len 128 here): 64 + 32 is refused at the list.
training_scenario '{preset: gpt2, layers: 2}' 'attention: flash' 'packed_documents:' '  lengths: [64, 32]'
expect 2 's\.yaml:9:[0-9]+' 'training\.packed_documents\.lengths' 'add up to 96'
trainsim run s.yaml

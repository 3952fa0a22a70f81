# A document length below 1 is refused at the list element.
training_scenario '{preset: gpt2, layers: 2}' 'attention: flash' 'packed_documents:' '  lengths: [-64, 192]'
expect 2 's\.yaml:9:[0-9]+' 'training\.packed_documents\.lengths\[0\]'
trainsim run s.yaml

# Packed documents under context parallelism are not modelled: refused at the key.
training_scenario '{preset: gpt2, layers: 2}' 'attention: flash' 'packed_documents: {length: 64}' -- 'parallel: {data: 2, context: 2}'
expect 2 's\.yaml:8:[0-9]+' 'training\.packed_documents' 'context'
trainsim run s.yaml

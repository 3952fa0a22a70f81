# A dropout probability of 1 (every input dropped) is refused; [0, 1) is allowed.
training_scenario 'llama2-7b' 'lora: {rank: 8, dropout: 1, targets: [q, v]}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.dropout' '\[0, 1\)'
trainsim run s.yaml

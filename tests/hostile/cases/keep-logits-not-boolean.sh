# keep_logits takes true or false; a torchtune version is refused at the value.
training_scenario 'gpt2' 'precision: bf16-true' 'keep_logits: "0.1"'
expect 2 's\.yaml:8:[0-9]+' 'training\.keep_logits'
trainsim run s.yaml

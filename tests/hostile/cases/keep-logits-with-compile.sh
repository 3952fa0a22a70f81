# keep_logits models the eager loss; the compiled one (compile: true) keeps other tensors, so the
# two together are refused at the key.
training_scenario 'gpt2' 'precision: bf16-true' 'compile: true' 'keep_logits: true'
expect 2 's\.yaml:9:[0-9]+' 'training\.keep_logits' 'compile'
trainsim run s.yaml

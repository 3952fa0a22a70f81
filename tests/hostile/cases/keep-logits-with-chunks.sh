# keep_logits models the unchunked loss; torchtune's chunked loss (loss_chunks > 1) came with the
# recipes that free the logits, so the two together are refused at the key.
training_scenario 'gpt2' 'precision: bf16-true' 'loss_chunks: 8' 'keep_logits: true'
expect 2 's\.yaml:9:[0-9]+' 'training\.keep_logits' 'unchunked'
trainsim run s.yaml

# keep_logits is the unchunked PyTorch loss of torchtune's early recipes; under bf16 without
# loss_chunks the loss is Megatron-LM's fused one, so keep_logits is refused at the key.
training_scenario 'gpt2' 'precision: bf16' 'keep_logits: true'
expect 2 's\.yaml:8:[0-9]+' 'training\.keep_logits' 'loss_chunks: 1'
trainsim run s.yaml

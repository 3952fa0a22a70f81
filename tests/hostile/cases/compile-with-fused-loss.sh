# compile models torch.compile of PyTorch's cross-entropy; under bf16 without loss_chunks the loss
# is Megatron-LM's fused one, so compile is refused at the key rather than silently ignored.
training_scenario 'gpt2' 'precision: bf16' 'compile: true'
expect 2 's\.yaml:8:[0-9]+' 'training\.compile' 'loss_chunks'
trainsim run s.yaml

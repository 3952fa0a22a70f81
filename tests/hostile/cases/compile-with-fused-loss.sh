# compile models torch.compile of PyTorch's cross-entropy; under bf16 without loss_chunks the loss
# is Megatron-LM's fused one, so compile is refused at the key rather than silently ignored.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  precision: bf16
  compile: true
YAML
expect 2 's\.yaml:8:[0-9]+' 'training\.compile' 'loss_chunks'
trainsim run s.yaml

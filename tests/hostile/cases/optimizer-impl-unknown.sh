# training.optimizer_impl names one of torch.optim's paths; anything else is refused with the list.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  precision: fp32
  optimizer_impl: multi-tensor
YAML
expect 2 's\.yaml:8:[0-9]+' 'training\.optimizer_impl' 'foreach \| for-loop \| fused' "multi-tensor"
trainsim run s.yaml

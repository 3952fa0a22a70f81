# bitsandbytes' optimizers run their own update kernels: for-loop is refused.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, precision: fp32, optimizer: adamw-8bit, optimizer_impl: for-loop}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer_impl' 'adamw-8bit has one implementation, fused'
trainsim run s.yaml

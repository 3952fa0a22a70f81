# optimizer_block counts elements per block: 0 is refused.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, precision: fp32, optimizer: adamw-8bit, optimizer_block: 0}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer_block'
trainsim run s.yaml

# optimizer_block is the absmax block of 8-bit states: torch AdamW keeps none.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, precision: fp32, optimizer: adamw, optimizer_block: 256}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer_block' 'adamw does not keep'
trainsim run s.yaml

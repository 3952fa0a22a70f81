# torchao's 4-bit AdamW compiles one fused step per parameter: foreach is refused.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, precision: bf16-true, optimizer: adamw-4bit, optimizer_impl: foreach}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer_impl' 'adamw-4bit has one implementation, fused'
trainsim run s.yaml

# torchao's 4-bit states are kept per parameter tensor: FSDP's sharded states are not modelled.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, precision: bf16-true, optimizer: adamw-4bit}
parallel: {data: 2, fsdp: true}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer' 'adamw-4bit with parallel\.fsdp'
trainsim run s.yaml

# bitsandbytes keeps its 8-bit states per tensor: ZeRO's partitioned states are refused.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, optimizer: adamw-8bit}
parallel: {data: 2, zero: 1}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer' 'parallel\.zero: 0'
trainsim run s.yaml

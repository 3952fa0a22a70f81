# parallel.fsdp.offload: a list instead of a scalar is refused at the key
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel:
  data: 2
  fsdp:
    offload: [cpu]
YAML
expect 2 's.yaml:8:[0-9]+: .*parallel.fsdp.offload'
trainsim run s.yaml

# A DeepSpeed spelling with its stage3_ prefix is not a key of parallel.zero3: refused, listing the keys.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel:
  data: 2
  zero: 3
  zero3: {stage3_max_live_parameters: 1e9}
YAML
expect 2 's\.yaml:8:[0-9]+' 'stage3_max_live_parameters' 'max_live_parameters'
trainsim run s.yaml

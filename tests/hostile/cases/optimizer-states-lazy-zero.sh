# ZeRO's partitioned optimizer allocates its states at init: optimizer_states: lazy is refused.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, precision: fp32, optimizer_states: lazy}
parallel: {data: 2, zero: 1}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer_states' 'allocates its states at init'
trainsim run s.yaml

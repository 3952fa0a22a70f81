# A mixture-of-experts capacity factor is a positive number: 0 would give every expert no room.
file s.yaml <<'YAML'
name: t
model: {preset: mixtral-8x7b, capacity_factor: 0}
device: h100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 8, expert: 8}
YAML
expect 2 's\.yaml:2:48: model\.capacity_factor: expected a number > 0'
trainsim run s.yaml

# A capacity factor written as a word is refused where it is written.
file s.yaml <<'YAML'
name: t
model: {preset: mixtral-8x7b, capacity_factor: lots}
device: h100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 8, expert: 8}
YAML
expect 2 's\.yaml:2:48: model\.capacity_factor: expected a finite number'
trainsim run s.yaml

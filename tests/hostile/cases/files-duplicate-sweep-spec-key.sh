# `axes:` twice in a sweep spec: the first no longer silently vanishes.
file grid.yaml <<'YAML'
base:
  model: gpt2
  device: a100-80gb
  training: {micro_batch: 1, seq_len: 128}
axes:
  training.micro_batch: [1, 2]
axes:
  training.seq_len: [128, 256]
YAML
expect 2 "grid\.yaml:7:1: duplicate key 'axes' \(first at line 5, column 1\)"
trainsim sweep grid.yaml

# A repeated key deep in a block mapping names its mapping's key path.
file s.yaml <<'YAML'
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  offload:
    optimizer: cpu
    optimizer: none
YAML
expect 2 "s\.yaml:8:5: training\.offload: duplicate key 'optimizer' \(first at line 7, column 5\)"
trainsim run s.yaml

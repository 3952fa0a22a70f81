# micro_batch twice in a flow mapping: both places are named.
file s.yaml <<'YAML'
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, micro_batch: 64}
YAML
expect 2 "s\.yaml:3:42: training: duplicate key 'micro_batch' \(first at line 3, column 12\)"
trainsim run s.yaml

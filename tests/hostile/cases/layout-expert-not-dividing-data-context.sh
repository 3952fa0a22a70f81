# The expert group lies inside data x context ranks: expert must divide their product.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128, attention: flash}
parallel: {data: 1, context: 2, expert: 4}
YAML
expect 2 's\.yaml:5:[0-9]+: parallel\.expert: ' 'must divide parallel\.data \(1\) x parallel\.context \(2\)'
trainsim run s.yaml

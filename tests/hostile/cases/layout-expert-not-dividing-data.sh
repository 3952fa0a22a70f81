# The expert group lies inside the data-parallel ranks: expert must divide data.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 2, expert: 4}
YAML
expect 2 's\.yaml:5:29: parallel\.expert: .*must divide parallel\.data \(2\)'
trainsim run s.yaml

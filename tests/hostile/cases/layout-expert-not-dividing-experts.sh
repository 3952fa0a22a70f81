# The expert-parallel degree must divide the number of experts (Mixtral: 8).
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 3, expert: 3}
YAML
expect 2 's\.yaml:5:29: parallel\.expert: .*must divide the number of experts \(8\)'
trainsim run s.yaml

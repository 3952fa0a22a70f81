# training.expert_imbalance is the busiest expert's share over the balanced one: >= 1.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128, expert_imbalance: 0.5}
parallel: {data: 8, expert: 8}
YAML
expect 2 's\.yaml:4:60: training\.expert_imbalance: expected a number >= 1'
trainsim run s.yaml

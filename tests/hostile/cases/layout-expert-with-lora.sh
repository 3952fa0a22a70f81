# Expert parallelism with training.lora stays refused, located at training.lora.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128, lora: {rank: 8, targets: [q, v]}}
parallel: {data: 2, expert: 2}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.lora' 'expert parallelism with training\.lora is not supported yet'
trainsim run s.yaml

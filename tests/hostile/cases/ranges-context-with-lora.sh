# parallel.context with training.lora stays refused, located at parallel.context.
file s.yaml <<'YAML'
name: t
model: llama2-7b
device: a100-80gb
training: {micro_batch: 1, seq_len: 1024, attention: flash, lora: {rank: 8, targets: [q, v]}}
parallel: {data: 1, context: 2}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.context with training\.lora is not supported yet'
trainsim run s.yaml

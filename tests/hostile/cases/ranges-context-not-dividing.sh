# parallel.context must divide seq_len / 2 (the 2C halves of the load-balanced causal split).
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 1024, attention: flash}
parallel: {context: 3}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.context' 'seq_len / 2'
trainsim run s.yaml

# parallel.context_attention is ring or allgather.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 1024, attention: flash}
parallel: {context: 2, context_attention: all-to-all}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.context_attention' 'allgather'
trainsim run s.yaml

# A fraction where a count belongs is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 2.5, seq_len: 128}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.micro_batch' 'integer'
trainsim run s.yaml

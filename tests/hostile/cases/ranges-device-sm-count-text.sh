# An SM count must be a whole number, not a word.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: h100-80gb, sm_count: many}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.sm_count'
trainsim run s.yaml

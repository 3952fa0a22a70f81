# A power limit must be watts (500, 500W or 0.5kW), not a word.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: h100-80gb, power_limit: full}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.power_limit' 'from 1 W to 100 kW' "got 'full'"
trainsim run s.yaml

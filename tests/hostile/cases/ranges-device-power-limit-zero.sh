# A power limit of 0 W (or a negative one) is refused, not read as "no limit".
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: h100-80gb, power_limit: 0W}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.power_limit' 'from 1 W to 100 kW'
trainsim run s.yaml

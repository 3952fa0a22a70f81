# A TDP in the wrong unit (kWh is energy, not power) is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: gh200-96gb, tdp: 1kWh, power_limit: 500W}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.tdp' "got '1kWh'"
trainsim run s.yaml

# host_dispatch is a duration; a word is refused at its cell, naming the key.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: a100-80gb, host_dispatch: fast}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.host_dispatch'
trainsim run s.yaml

# A negative size says so in plain words (it once read "expected a non-negative a size").
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: a100-80gb, memory: -1GB}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.memory' "negative size '-1GB'"
trainsim run s.yaml

# A misspelt required key is named as unknown, with the key it probably means.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_bach: 1, seq_len: 128}
YAML
expect 2 's\.yaml:4:[0-9]+' "unknown key 'micro_bach'" "did you mean 'micro_batch'"
trainsim run s.yaml

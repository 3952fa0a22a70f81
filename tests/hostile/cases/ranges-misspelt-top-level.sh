# A misspelt top-level section is named as unknown before the missing-section check.
file s.yaml <<'YAML'
name: t
modle: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:2:1' "unknown key 'modle'" "did you mean 'model'"
trainsim run s.yaml

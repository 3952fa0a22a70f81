# `model:` twice: the second no longer silently loses to the first.
file s.yaml <<'YAML'
model: gpt2
device: a100-80gb
model: llama2-7b
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 "s\.yaml:3:1: duplicate key 'model' \(first at line 1, column 1\)"
trainsim run s.yaml

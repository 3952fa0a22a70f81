# plan --gpus 0 is refused with the accepted range.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 '--gpus' '1\.\.16777216'
trainsim plan s.yaml --gpus 0

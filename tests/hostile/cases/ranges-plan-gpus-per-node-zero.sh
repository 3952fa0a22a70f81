# plan --gpus-per-node 0 is refused with the accepted range.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 '--gpus-per-node must be in 1\.\.16777216, got 0'
trainsim plan s.yaml --gpus 8 --gpus-per-node 0

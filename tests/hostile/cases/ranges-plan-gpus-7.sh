# No layout of 7 GPUs exists for gpt2 (12 heads, 12 blocks, batch 8): plan says why.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, global_batch: 8}
YAML
expect 2 'no layout of 7 GPUs' 'global batch' '7'
trainsim plan s.yaml --gpus 7

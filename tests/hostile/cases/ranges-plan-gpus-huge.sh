# plan --gpus 1e30 (not a 64-bit integer) and 2^32 (above the range) are usage errors.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
trainsim plan s.yaml --gpus 1e30
[ "$code" = 2 ] || { echo "--gpus 1e30 exited $code"; exit 1; }
expect 2 '--gpus' '1\.\.16777216'
trainsim plan s.yaml --gpus 4294967296

# An unsharded sweep's file (no shard tag) is not taken for a shard.
file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: v100-16gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: fp16}
YAML
file sweep.yaml <<'YAML'
base: {file: tiny.yaml}
axes:
  training.micro_batch: [1, 2]
YAML
"$TS" sweep sweep.yaml --csv all.csv -j 1 > /dev/null
expect 2 'all\.csv:1:1: no shard tag on the first line'
trainsim merge out.csv all.csv

# The merged file is checked like every output: a full disk is an error naming it.
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
"$TS" sweep sweep.yaml --shard 1/1 --csv s1.csv -j 1 > /dev/null
expect 2 '/dev/full: OUT: cannot write this file: No space left on device'
trainsim merge /dev/full s1.csv

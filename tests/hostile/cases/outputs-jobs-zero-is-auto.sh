# -j 0 keeps its documented meaning, one thread per hardware thread (capped at the points).
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
expect 0 '^2 of 2 points: '
trainsim sweep sweep.yaml -j 0

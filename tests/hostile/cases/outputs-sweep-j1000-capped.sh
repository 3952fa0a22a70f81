# -j 1000 on a sweep of 4 points starts 4 threads, not 1,000, and says so.
file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: v100-16gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: fp16}
YAML
file sweep.yaml <<'YAML'
base: {file: tiny.yaml}
axes:
  training.micro_batch: [1, 2, 3, 4]
YAML
expect 0 '-j 1000 lowered to 4 worker threads \(4 points to run\)' '^4 of 4 points: '
trainsim sweep sweep.yaml --csv out.csv -j 1000

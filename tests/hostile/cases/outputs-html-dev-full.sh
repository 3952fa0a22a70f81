# A self-contained HTML report written to a full disk fails with the file named.
file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: v100-16gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: fp16}
YAML
expect 2 '/dev/full: --html: cannot write this file: No space left on device'
trainsim run tiny.yaml --no-diagnosis --html /dev/full

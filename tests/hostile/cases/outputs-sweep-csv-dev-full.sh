# A sweep whose results file fills the disk stops with the file named (each record is flushed
# and checked), not exit 0 with nothing written.
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
expect 2 '/dev/full: --csv: cannot write this file: No space left on device'
trainsim sweep sweep.yaml --csv /dev/full -j 1

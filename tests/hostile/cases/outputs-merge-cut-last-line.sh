# A shard whose last record was cut mid-write (no final newline) is refused, located at the line.
file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: v100-16gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: fp16}
YAML
file sweep.yaml <<'YAML'
base: {file: tiny.yaml}
axes:
  training.micro_batch: [1, 2, 3]
YAML
"$TS" sweep sweep.yaml --shard 1/1 --jsonl s1.jsonl -j 1 > /dev/null
head -c -40 s1.jsonl > cut.jsonl
expect 2 'cut\.jsonl:4:1: the last line is cut short'
trainsim merge out.jsonl cut.jsonl

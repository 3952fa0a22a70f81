# A merge without every part is refused, saying which parts are missing.
file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: v100-16gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: fp16}
YAML
file sweep.yaml <<'YAML'
base: {file: tiny.yaml}
axes:
  training.micro_batch: {range: [1, 40], step: 1}
YAML
"$TS" sweep sweep.yaml --shard 2/3 --jsonl s2.jsonl -j 1 > /dev/null
expect 2 'missing shards 1/3, 3/3 \(1 of 3 given\); merge needs every part'
trainsim merge out.jsonl s2.jsonl

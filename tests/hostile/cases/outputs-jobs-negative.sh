# A negative -j is a usage error (plan used to take it as one thread).
file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
YAML
expect 2 '--jobs must be >= 0 \(0 = one per hardware thread\)'
trainsim plan tiny.yaml --gpus 1 --jobs=-3

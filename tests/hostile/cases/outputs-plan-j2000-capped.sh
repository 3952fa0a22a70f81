# plan -j 2000 is capped at 4 threads per hardware thread (it used to abort when the system
# refused the threads: "terminate called without an active exception").
file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel: {data: 2}
cluster: {nodes: 1, gpus_per_node: 2}
YAML
expect 0 '-j 2000 lowered to [0-9]+ worker threads \(at most 4 per hardware thread' '^rank'
trainsim plan tiny.yaml --gpus 2 --top 1 --max-micro-batch 2 -j 2000

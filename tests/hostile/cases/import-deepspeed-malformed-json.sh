# import deepspeed: broken JSON is located in the file.
file ds.json <<'EOF2'
{
  "train_micro_batch_size_per_gpu": 4,
  "zero_optimization": {"stage": 2
}
EOF2
expect 2 "^error: ds\.json:[0-9]+:[0-9]+: not valid JSON"
trainsim import deepspeed ds.json --model gpt2 --seq-len 1024

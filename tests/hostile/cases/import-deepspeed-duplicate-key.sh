# import deepspeed: a key written twice would silently lose one value: refused.
file ds.json <<'EOF2'
{"train_micro_batch_size_per_gpu": 1,
 "train_micro_batch_size_per_gpu": 8}
EOF2
expect 2 "^error: ds\.json:2:2: .*duplicate key 'train_micro_batch_size_per_gpu'"
trainsim import deepspeed ds.json --model gpt2 --seq-len 1024

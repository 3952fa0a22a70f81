# import deepspeed: a ZeRO stage that does not exist is refused at its value.
file ds.json <<'EOF2'
{"train_micro_batch_size_per_gpu": 1,
 "zero_optimization": {"stage": 4}}
EOF2
expect 2 "^error: ds\.json:2:33: zero_optimization\.stage: expected 0, 1, 2 or 3, got 4$"
trainsim import deepspeed ds.json --model gpt2 --seq-len 1024

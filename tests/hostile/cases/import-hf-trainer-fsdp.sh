# import hf-trainer: an fsdp option without a sharding strategy: an error naming the field,
# not a silent FULL_SHARD or DDP.
file args.json <<'EOF2'
{"per_device_train_batch_size": 4,
 "fsdp": ["offload", "auto_wrap"]}
EOF2
expect 2 "^error: args\.json:2:10: fsdp: names no sharding strategy \(full_shard, shard_grad_op, \.\.\.\)$"
trainsim import hf-trainer args.json --model gpt2 --seq-len 1024 --gpus 8

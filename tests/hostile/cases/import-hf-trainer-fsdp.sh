# import hf-trainer: FSDP is not modelled yet: an error naming the field, not a silent DDP.
file args.json <<'EOF2'
{"per_device_train_batch_size": 4,
 "fsdp": ["full_shard", "auto_wrap"]}
EOF2
expect 2 "^error: args\.json:2:10: fsdp: FSDP is not supported by trainsim yet$"
trainsim import hf-trainer args.json --model gpt2 --seq-len 1024 --gpus 8

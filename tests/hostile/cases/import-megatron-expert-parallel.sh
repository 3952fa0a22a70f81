# import megatron: expert parallelism of a model without --num-experts: an error naming the option.
file run.args <<'EOF2'
--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 16
--expert-model-parallel-size 4
EOF2
expect 2 "^error: run\.args:2:1: --expert-model-parallel-size: above 1 without --num-experts: the model has no experts$"
trainsim import megatron run.args --gpus 4

# import: --gpus-per-node must divide the GPUs.
file run.args <<'EOF2'
--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 16
EOF2
expect 2 "^error: trainsim import: --gpus-per-node: expected a positive divisor of the 12 GPUs, got 8$"
trainsim import megatron run.args --gpus 12 --gpus-per-node 8

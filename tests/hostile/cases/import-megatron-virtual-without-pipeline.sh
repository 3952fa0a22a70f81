# import megatron: virtual pipeline stages without a pipeline are refused at the option.
file run.args <<'EOF2'
--num-layers 8 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 --seq-length 16
--num-layers-per-virtual-pipeline-stage 2
EOF2
expect 2 "^error: run\.args:2:1: --num-layers-per-virtual-pipeline-stage: virtual pipeline stages need --pipeline-model-parallel-size above 1$"
trainsim import megatron run.args

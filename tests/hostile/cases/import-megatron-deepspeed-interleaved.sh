# import megatron: Megatron-DeepSpeed's --deepspeed pipeline engine has no interleaved schedule;
# asking for virtual stages with it is refused at --deepspeed.
file run.args <<'EOF2'
--num-layers 8 --hidden-size 64 --num-attention-heads 4 --vocab-size 100
--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2
--deepspeed
EOF2
expect 2 "^error: run\.args:3:1: --deepspeed: .*interleaved schedule"
trainsim import megatron run.args --gpus 2

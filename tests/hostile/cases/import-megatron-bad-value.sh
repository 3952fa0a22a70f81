# import megatron: a known option with a value of the wrong type is located at the value.
file run.args <<'EOF2'
--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100
--seq-length 2k
EOF2
expect 2 "^error: run\.args:2:14: --seq-length: expected an integer in 1..1073741824, got '2k'$"
trainsim import megatron run.args

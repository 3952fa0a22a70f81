# import megatron: a launch script's shell variable is not expanded; it is named where written.
file run.args <<'EOF2'
--num-layers 24 \
  --hidden-size $HIDDEN
EOF2
expect 2 "^error: run\.args:2:17: shell variable '\\\$HIDDEN' is not expanded: write its value in the file$"
trainsim import megatron run.args

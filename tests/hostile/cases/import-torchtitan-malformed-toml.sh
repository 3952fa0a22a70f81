# import torchtitan: broken TOML is located by toml++.
file job.toml <<'EOF2'
[training]
local_batch_size = = 4
EOF2
expect 2 "^error: job\.toml:2:[0-9]+: not valid TOML: "
trainsim import torchtitan job.toml

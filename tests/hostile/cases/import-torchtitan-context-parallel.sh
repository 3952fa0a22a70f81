# import torchtitan: context parallelism has no model in trainsim: an error naming the key.
file job.toml <<'EOF2'
[model]
name = "llama3"
flavor = "8B"
[parallelism]
data_parallel_shard_degree = 1
context_parallel_degree = 2
EOF2
expect 2 "^error: job\.toml:6:27: parallelism\.context_parallel_degree: context_parallel_degree above 1 is not supported by trainsim yet$"
trainsim import torchtitan job.toml --gpus 2

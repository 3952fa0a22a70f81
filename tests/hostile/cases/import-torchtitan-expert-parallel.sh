# import torchtitan: expert parallelism of a model without experts: an error naming the key.
file job.toml <<'EOF2'
[model]
name = "llama3"
flavor = "8B"
[parallelism]
data_parallel_shard_degree = 1
expert_parallel_degree = 2
EOF2
expect 2 "^error: job\.toml:6:26: parallelism\.expert_parallel_degree: expert parallelism of a model without experts \(llama3-8b\) is not supported by trainsim yet$"
trainsim import torchtitan job.toml --gpus 1

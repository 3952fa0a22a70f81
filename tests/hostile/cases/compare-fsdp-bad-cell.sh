# compare: an fsdp cell that is neither yes/no, a shard size nor a sharding strategy is refused at its cell.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms),fsdp
30,3072,32,2048,8,512,1,64,1,3566.5,half
CSV
expect 2 "^error: measured\\.csv:2:37: column 'fsdp': expected yes, no, true, false or a shard size \\(a positive whole number\\), or FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD or NO_SHARD, got 'half'$"
trainsim compare measured.csv --map fsdp=fsdp

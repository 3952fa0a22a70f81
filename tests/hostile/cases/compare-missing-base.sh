# compare: a --base that does not exist is named (exit 2), not an internal error.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,3566.5
CSV
expect 2 "no/such/base\.yaml" "does not exist"
trainsim compare measured.csv --base no/such/base.yaml

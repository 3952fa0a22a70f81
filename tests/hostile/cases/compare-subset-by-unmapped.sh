# compare: --subset-by a key with no column says how to map it.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,3566.5
CSV
expect 2 "^error: --subset-by device:1:1: device is not mapped; map it with --map device=COLUMN$"
trainsim compare measured.csv --subset-by device

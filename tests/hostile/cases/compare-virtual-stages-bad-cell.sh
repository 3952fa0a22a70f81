# compare: a virtual_stages cell (NeMo's VP column) must be a positive whole number; n/a is
# refused, not read as 1.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms),vp
30,3072,32,2048,8,512,1,64,1,3566.5,n/a
CSV
expect 2 "^error: measured\\.csv:2:37: column 'vp': expected a positive whole number, got 'n/a'$"
trainsim compare measured.csv --map virtual_stages=vp

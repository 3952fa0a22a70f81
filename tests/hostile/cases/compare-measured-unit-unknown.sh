# compare: a measured unit not in the list is refused, naming the accepted spellings.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,tokens/s
30,3072,32,2048,8,512,1,64,1,300000
CSV
expect 2 "^error: --measured-unit tokens/sec:1:1: expected one of ms \\| s \\| tokens/s \\| tokens/s/gpu \\| samples/s \\| tflops/gpu \\| mfu$"
trainsim compare measured.csv --map measured=tokens/s --measured-unit tokens/sec

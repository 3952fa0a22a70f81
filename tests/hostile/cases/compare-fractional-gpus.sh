# compare: a parallel degree must be a whole number (1.5 was rounded to 2 before).
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1.5,64,1,3566.5
CSV
expect 2 "^error: measured\.csv:2:23: column 'tensor parallelism': expected a positive whole number, got '1\.5'$"
trainsim compare measured.csv

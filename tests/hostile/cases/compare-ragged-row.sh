# compare: a row with a cell too many is refused at that cell.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,3566.5,7
CSV
expect 2 "^error: measured\.csv:2:37: expected 10 cells as in the header, got 11$"
trainsim compare measured.csv

# compare: a quoted cell never closed (it swallowed the rest of the line) is refused at its quote.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,"3566.5
CSV
expect 2 "^error: measured\.csv:2:30: this quoted cell is not closed"
trainsim compare measured.csv

# compare: a measured time with a unit in it is refused at its cell, which names the column.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,3566.5
30,3072,32,2048,4,512,1,64,1,3.5 s
CSV
expect 2 "^error: measured\.csv:3:30: column 'iteration time \\(ms\\)': expected a positive finite time in ms, got '3\\.5 s'$"
trainsim compare measured.csv

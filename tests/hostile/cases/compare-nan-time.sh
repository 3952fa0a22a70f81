# compare: a measured time that is not a number is refused at its cell.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,3566.5
30,3072,32,2048,4,512,1,64,1,nan
CSV
expect 2 "^error: measured\.csv:3:30: column 'iteration time \\(ms\\)': expected a positive finite time in ms, got 'nan'$"
trainsim compare measured.csv

# compare: a negative measured time is refused at its cell (it gave an error of -70670%).
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,3566.5
30,3072,32,2048,4,512,1,64,1,-3
CSV
expect 2 "^error: measured\.csv:3:30: column 'iteration time \\(ms\\)': expected a positive finite time in ms, got '-3'$"
trainsim compare measured.csv

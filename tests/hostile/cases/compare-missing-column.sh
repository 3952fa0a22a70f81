# compare: a table without the measured column names the file, the column and the --map fix.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,time_ms
30,3072,32,2048,8,512,1,64,1,3566.5
CSV
expect 2 "^error: measured\.csv:1:1: the table has no column 'iteration time \(ms\)'; name the column that holds measured with --map measured=COLUMN$"
trainsim compare measured.csv

# compare: a header with no rows is refused (it printed an empty table and exit 0).
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
CSV
expect 2 "^error: measured\.csv:1:1: expected at least one data row after the header$"
trainsim compare measured.csv

# calibrate: memory rows without a bytes column are refused (their size was taken as 0).
file timings.csv <<'CSV'
kind,flops,us
matmul,2.1e9,20
memory,1e6,5
CSV
expect 2 "^error: timings\.csv:1:1: expected a 'bytes' column for the memory rows$"
trainsim calibrate timings.csv --device a100-80gb

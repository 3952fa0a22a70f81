# compare: an MFU written in percent is refused at its cell instead of read as 4120%.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,MFU
30,3072,32,2048,8,512,1,64,1,41.2
CSV
expect 2 "^error: measured\\.csv:2:30: column 'MFU': expected MFU as a fraction in \\(0, 1\\] \\(42% is 0\\.42\\), got '41\\.2'$"
trainsim compare measured.csv --map measured=MFU --measured-unit mfu

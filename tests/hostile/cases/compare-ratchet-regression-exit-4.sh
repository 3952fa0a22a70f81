# compare --ratchet: a subset worse than recorded exits 4 (README lists it), not 0 or 2.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,1000
CSV
file ratchet.txt <<'TXT'
all 1.0
TXT
expect 4 "ratchet: all MAPE [0-9.]+% is worse than the recorded 1\.00%"
trainsim compare measured.csv --ratchet ratchet.txt

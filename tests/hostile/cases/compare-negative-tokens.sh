# compare: a negative rate is refused at its cell, naming the unit.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,tokens/s/gpu
30,3072,32,2048,8,512,1,64,1,-4600
CSV
expect 2 "^error: measured\\.csv:2:30: column 'tokens/s/gpu': expected a positive finite number in tokens/s/gpu, got '-4600'$"
trainsim compare measured.csv --map measured=tokens/s/gpu --measured-unit tokens/s/gpu

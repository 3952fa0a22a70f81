# compare: --seconds beside another --measured-unit is a contradiction, not a silent choice.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,3566.5
CSV
expect 2 "--seconds is --measured-unit s; it contradicts --measured-unit ms"
trainsim compare measured.csv --seconds --measured-unit ms

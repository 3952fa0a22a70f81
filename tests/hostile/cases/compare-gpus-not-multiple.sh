# compare: without a data column, a GPU count that tensor x pipeline does not divide is refused at its cell.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,pipeline parallelism,# GPUs,iteration time (ms)
30,3072,32,2048,8,512,8,2,100,3566.5
CSV
expect 2 "^error: measured\\.csv:2:27: column '# GPUs': expected a multiple of tensor x pipeline x context \\(the data degree is GPUs / that\\), got '100'$"
trainsim compare measured.csv

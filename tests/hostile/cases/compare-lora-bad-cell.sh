# compare: a lora cell that is neither a rank nor none is refused at its cell.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms),lora
30,3072,32,2048,8,512,1,64,1,3566.5,r16
CSV
expect 2 "^error: measured\\.csv:2:37: column 'lora': expected a LoRA rank \\(a positive whole number\\) or none, got 'r16'$"
trainsim compare measured.csv --map lora=lora

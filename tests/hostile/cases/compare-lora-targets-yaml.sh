# compare: a lora_targets cell cannot carry YAML into the override; refused at its cell.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms),lora,targets
30,3072,32,2048,8,512,1,64,1,3566.5,16,"q, {v: 1}"
CSV
expect 2 "^error: measured\\.csv:2:40: column 'targets': expected LoRA targets \\(q, k, v, o, gate, up, down or all-linear\\) separated by blanks or ';', got 'q, \\{v: 1\\}'$"
trainsim compare measured.csv --map lora=lora --map lora_targets=targets

# compare: a model cell carrying YAML is refused, not spliced into an override.
file measured.csv <<'CSV'
model,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
"{preset: gpt2, layers: 9}",2048,8,512,1,64,1,3566.5
CSV
expect 2 "^error: measured\\.csv:2:1: column 'model': expected a model preset name or a config\\.json path, got '\\{preset: gpt2, layers: 9\\}'$"
trainsim compare measured.csv --map model=model

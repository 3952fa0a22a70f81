# compare: the default --base is found beside the executable, so compare runs from any folder
# (hostile cases run in an empty scratch folder; it used to need the repository root).
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
30,3072,32,2048,8,512,1,64,1,3566.5
CSV
expect 0 "^ +1 +1 +1 +64 +3\.567 s +[0-9.]+ s" "^all +1 "
trainsim compare measured.csv

# A merge shard that is a directory is refused (once: merged as an empty shard, exit 0).
mkdir -p shard2.csv
file shard1.csv <<'CSV'
point,status
0,fits
CSV
expect 2 'shard2\.csv: is a directory'
trainsim merge out.csv shard2.csv shard1.csv

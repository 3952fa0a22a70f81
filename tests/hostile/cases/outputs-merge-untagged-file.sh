# An unsharded sweep's file (no shard tag) is not taken for a shard.
tiny_sweep '[1, 2]'
"$TS" sweep sweep.yaml --csv all.csv -j 1 > /dev/null
expect 2 'all\.csv:1:1: no shard tag on the first line'
trainsim merge out.csv all.csv

# A shard whose last record was cut mid-write (no final newline) is refused, located at the line.
tiny_sweep '[1, 2, 3]'
"$TS" sweep sweep.yaml --shard 1/1 --jsonl s1.jsonl -j 1 > /dev/null
head -c -40 s1.jsonl > cut.jsonl
expect 2 'cut\.jsonl:4:1: the last line is cut short'
trainsim merge out.jsonl cut.jsonl

# A merge without every part is refused, saying which parts are missing.
tiny_sweep '{range: [1, 40], step: 1}'
"$TS" sweep sweep.yaml --shard 2/3 --jsonl s2.jsonl -j 1 > /dev/null
expect 2 'missing shards 1/3, 3/3 \(1 of 3 given\); merge needs every part'
trainsim merge out.jsonl s2.jsonl

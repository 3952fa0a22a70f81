# The same part given twice (under another name) is refused, naming both files.
tiny_sweep '{range: [1, 40], step: 1}'
"$TS" sweep sweep.yaml --shard 1/2 --csv s1.csv -j 1 > /dev/null
cp s1.csv copy.csv
expect 2 'copy\.csv:1:1: shard 1/2 is given twice \(also s1\.csv\)'
trainsim merge out.csv s1.csv copy.csv

# The merged file is checked like every output: a full disk is an error naming it.
tiny_sweep '[1, 2]'
"$TS" sweep sweep.yaml --shard 1/1 --csv s1.csv -j 1 > /dev/null
expect 2 '/dev/full: OUT: cannot write this file: No space left on device'
trainsim merge /dev/full s1.csv

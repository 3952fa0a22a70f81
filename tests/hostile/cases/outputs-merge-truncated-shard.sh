# A shard cut short (a killed run: fewer rows than its part of the sweep) is refused with the
# missing points named (it used to merge what was there: 30 points of a larger sweep).
tiny_sweep '{range: [1, 40], step: 1}'
"$TS" sweep sweep.yaml --shard 1/2 --csv s1.csv -j 1 > /dev/null
"$TS" sweep sweep.yaml --shard 2/2 --csv s2.csv -j 1 > /dev/null
head -n 12 s1.csv > cut.csv   # the tag, the header and 10 of its 32 points
expect 2 'cut\.csv: shard 1/2 holds 10 of its 32 points \(missing points 10-31\)' \
  'finish it with `trainsim sweep --shard 1/2 --resume`'
trainsim merge out.csv cut.csv s2.csv

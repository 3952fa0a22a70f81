# compare: an empty measurements file is refused at its first line.
file measured.csv </dev/null
expect 2 "^error: measured\.csv:1:1: expected a header row, got an empty file$"
trainsim compare measured.csv

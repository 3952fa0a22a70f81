# -j 1000 on a sweep of 4 points starts 4 threads, not 1,000, and says so.
tiny_sweep '[1, 2, 3, 4]'
expect 0 '-j 1000 lowered to 4 worker threads \(4 points to run\)' '^4 of 4 points: '
trainsim sweep sweep.yaml --csv out.csv -j 1000

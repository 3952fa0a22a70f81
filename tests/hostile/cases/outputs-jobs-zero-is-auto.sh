# -j 0 keeps its documented meaning, one thread per hardware thread (capped at the points).
tiny_sweep '[1, 2]'
expect 0 '^2 of 2 points: '
trainsim sweep sweep.yaml -j 0

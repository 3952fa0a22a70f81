# When the system refuses a worker thread (here: each thread's 2 GiB stack does not fit in
# 3 GiB of address space), the started ones are joined and the sweep ends with a message and
# exit 5 (resources exhausted), not "terminate called without an active exception" (SIGABRT).
tiny_sweep '[1, 2, 3, 4]'
# AddressSanitizer reserves terabytes of address space for its shadow memory: under a 3 GiB
# limit such a build cannot start at all, so the sanitizer suite skips this case.
sanitized && skip "an ASan build cannot run under ulimit -v"
ulimit -s 2097152
ulimit -v 3145728
expect 5 'cannot start worker thread [0-9]+ of 4 \(.*\); run with fewer threads \(-j\)'
trainsim sweep sweep.yaml -j 4

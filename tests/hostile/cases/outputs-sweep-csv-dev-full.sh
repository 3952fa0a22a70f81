# A sweep whose results file fills the disk stops with the file named (each record is flushed
# and checked), not exit 0 with nothing written.
tiny_sweep '[1, 2]'
expect 2 '/dev/full: --csv: cannot write this file: No space left on device'
trainsim sweep sweep.yaml --csv /dev/full -j 1

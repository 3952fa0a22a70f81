# A memory plot (SVG) written to a full disk fails with the file named.
tiny_scenario
expect 2 '/dev/full: --plot: cannot write this file: No space left on device'
trainsim run tiny.yaml --no-diagnosis --plot /dev/full

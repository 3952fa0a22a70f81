# A Chrome trace written to a full disk fails with the file named.
tiny_scenario
expect 2 '/dev/full: --trace: cannot write this file: No space left on device'
trainsim run tiny.yaml --no-diagnosis --trace /dev/full

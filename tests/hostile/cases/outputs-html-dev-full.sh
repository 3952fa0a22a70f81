# A self-contained HTML report written to a full disk fails with the file named.
tiny_scenario
expect 2 '/dev/full: --html: cannot write this file: No space left on device'
trainsim run tiny.yaml --no-diagnosis --html /dev/full

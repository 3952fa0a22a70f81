# A report written to a full disk fails with the file and the reason named (it used to exit 0
# with nothing written).
expect 2 '/dev/full: --output: cannot write this file: No space left on device'
trainsim run "$REPO/scenarios/quickstart.yaml" --no-diagnosis -o /dev/full

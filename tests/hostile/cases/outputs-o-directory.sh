# -o naming a directory is refused with the reason.
mkdir -p reports
expect 2 'reports: --output: cannot write this file: Is a directory'
trainsim run "$REPO/scenarios/quickstart.yaml" --no-diagnosis -o reports

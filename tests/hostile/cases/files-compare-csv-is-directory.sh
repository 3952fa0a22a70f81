# compare's measurements CSV that is a directory is refused by name (once: an empty table).
mkdir -p runs.csv
expect 2 'runs\.csv: is a directory'
trainsim compare runs.csv --base "$REPO/scenarios/validation/megatron_a100_vtrain.yaml"

# A scenario path that is a directory is refused by name, not read as an empty scenario.
mkdir -p scen.yaml
expect 2 'scen\.yaml: is a directory'
trainsim run scen.yaml

# A sweep spec that is a directory is refused by name.
mkdir -p grid.yaml
expect 2 'grid\.yaml: is a directory'
trainsim sweep grid.yaml

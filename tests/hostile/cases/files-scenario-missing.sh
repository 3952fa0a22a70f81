# A scenario that does not exist says so, naming the path.
expect 2 'no/such/s\.yaml: does not exist'
trainsim run no/such/s.yaml

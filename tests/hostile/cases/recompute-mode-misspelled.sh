# recompute takes none, selective, full or selective-op; torchtitan's option spelled as its TOML
# value ("op") is refused at the value, naming the choices.
training_scenario 'gpt2' 'recompute: op'
expect 2 's\.yaml:7:[0-9]+' 'training\.recompute.*selective-op'
trainsim run s.yaml

# modules takes fused or eager; "compiled" (training.compile says that) is refused at the value.
training_scenario gpt2 'modules: compiled'
expect 2 's\.yaml:7:[0-9]+' 'training\.modules'
trainsim run s.yaml

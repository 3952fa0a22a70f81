# A model YAML file with `layers:` twice is refused in the model file.
file m.yaml <<'YAML'
name: tiny
layers:
  - {name: fc1, kind: linear, in: 64, out: 64}
layers:
  - {name: fc2, kind: linear, in: 64, out: 64}
YAML
file s.yaml <<'YAML'
model: {file: m.yaml}
device: a100-80gb
training: {micro_batch: 1}
YAML
expect 2 "m\.yaml:4:1: duplicate key 'layers' \(first at line 2, column 1\)"
trainsim run s.yaml

# Groups each well under the cap but over it together are refused at the group that passes it.
file model.yaml <<'YAML'
name: groups add up
device: v100-16gb
training: {micro_batch: 1, seq_len: 128, precision: fp16, optimizer: adamw}
limits: {max_layers: 1000}
model:
  name: deep
  layers:
    - {name: g0, repeat: 400, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g1, repeat: 400, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g2, repeat: 101, layers: [{name: a, kind: linear, in: 64, out: 64}, {name: b, kind: linear, in: 64, out: 64}]}
YAML
expect 2 "^error: model\.yaml:10:26: model\.layers\[2\]\.repeat: the model, with this group's 101 copies of 2 layers, would hold 1002 layers in all, more than limits\.max_layers = 1000;"
trainsim validate model.yaml

# Ten groups of repeat: 100000 (a million layers) took 15 s and 2.4 GB: the layer cap was per
# group. The cap is on the whole model now, so the first group that passes it is refused at once.
file model.yaml <<'YAML'
name: ten groups
device: v100-16gb
training: {micro_batch: 1, seq_len: 128, precision: fp16, optimizer: adamw}
model:
  name: deep
  layers:
    - {name: embed, kind: embedding, vocab: 1000, hidden: 64}
    - {name: g0, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g1, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g2, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g3, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g4, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g5, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g6, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g7, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g8, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: g9, repeat: 100000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: loss, kind: loss, vocab: 1000, hidden: 64}
YAML
expect 2 "^error: model\.yaml:8:26: model\.layers\[1\]\.repeat: the model, with this group's 100000 copies of 1 layers, would hold 100001 layers in all, more than limits\.max_layers = 25000; raise it with limits: \{max_layers: N\}"
trainsim run model.yaml

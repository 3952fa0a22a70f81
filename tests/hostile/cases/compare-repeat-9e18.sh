# A repeat near 2^63 copies of two layers overflows the layer count; it is refused, not wrapped.
file model.yaml <<'YAML'
name: repeat 9e18
device: v100-16gb
training: {micro_batch: 1, seq_len: 128, precision: fp16, optimizer: adamw}
model:
  name: deep
  layers:
    - {name: g, repeat: 9000000000000000000, layers: [{name: a, kind: linear, in: 64, out: 64}, {name: b, kind: linear, in: 64, out: 64}]}
YAML
expect 2 "model\.layers\[0\]\.repeat: the model, with this group's 9000000000000000000 copies of 2 layers, would hold more than 2\^63 layers in all"
trainsim run model.yaml

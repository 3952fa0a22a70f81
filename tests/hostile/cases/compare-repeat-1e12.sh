# repeat: 1e12 is not a whole count of copies; a huge whole one is refused by the layer cap.
file model.yaml <<'YAML'
name: repeat 1e12
device: v100-16gb
training: {micro_batch: 1, seq_len: 128, precision: fp16, optimizer: adamw}
model:
  name: deep
  layers:
    - {name: g, repeat: 1e12, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
YAML
expect 2 "^error: model\.yaml:7:25: model\.layers\[0\]\.repeat: expected a positive integer, got '1e12'"
trainsim run model.yaml

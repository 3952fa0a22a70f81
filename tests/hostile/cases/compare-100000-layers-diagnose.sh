# diagnose of a 100,000-layer model that runs out of activation memory re-simulated each remedy
# from scratch: 8.6 s of CPU (25 s on the shared machine). Refused up front by limits.max_layers.
file deep.yaml <<'YAML'
name: deep
device: v100-16gb
training: {micro_batch: 16, seq_len: 128, precision: fp16, optimizer: adamw}
model:
  name: deep
  layers:
    - {name: embed, kind: embedding, vocab: 1000, hidden: 64}
    - {name: block, repeat: 99998, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
    - {name: loss, kind: loss, vocab: 1000, hidden: 64}
YAML
expect 2 "^error: deep\.yaml:8:29: model\.layers\[1\]\.repeat: the model, with this group's 99998 copies of 1 layers, would hold 99999 layers in all, more than limits\.max_layers = 25000; raise it with limits: \{max_layers: N\}"
trainsim diagnose deep.yaml

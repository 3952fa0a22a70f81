# limits.max_layers raises the cap for a model that means it (and a lower one refuses earlier).
file deep.yaml <<'YAML'
name: deep
device: v100-16gb
training: {micro_batch: 1, seq_len: 128, precision: fp16, optimizer: adamw}
limits: {max_layers: 30000}
model:
  name: deep
  layers:
    - {name: block, repeat: 30000, layers: [{name: fc, kind: linear, in: 64, out: 64}]}
YAML
expect 0 "^ok: deep"
trainsim validate deep.yaml

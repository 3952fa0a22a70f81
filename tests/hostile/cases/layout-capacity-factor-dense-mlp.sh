# A capacity factor on a dense mlp layer of a layer graph is refused in the model's text.
file s.yaml <<'YAML'
name: t
model:
  name: net
  layers:
    - {name: m, kind: mlp, hidden: 32, ffn: 64, capacity_factor: 1.5}
device: a100-80gb
training: {micro_batch: 1, seq_len: 16}
YAML
expect 2 's\.yaml:5:[0-9]+: .*capacity factor needs experts > 1'
trainsim run s.yaml

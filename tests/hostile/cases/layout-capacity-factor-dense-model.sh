# A capacity factor on a model without mixture-of-experts layers is refused, not ignored.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, capacity_factor: 1.25}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:2:40: model\.capacity_factor: .*has no MoE layers'
trainsim run s.yaml

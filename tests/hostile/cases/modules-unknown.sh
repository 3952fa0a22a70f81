# modules takes fused or eager; "compiled" (training.compile says that) is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  modules: compiled
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.modules'
trainsim run s.yaml

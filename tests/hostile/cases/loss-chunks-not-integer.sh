# A fractional or textual loss_chunks is refused at the value, not truncated.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  loss_chunks: 2.5
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.loss_chunks'
trainsim run s.yaml

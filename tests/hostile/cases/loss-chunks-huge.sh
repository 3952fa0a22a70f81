# A loss_chunks past 2^20 is refused with the range, never wraps.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  loss_chunks: 99999999999999999999
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.loss_chunks'
trainsim run s.yaml

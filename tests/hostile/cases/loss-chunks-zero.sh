# loss_chunks 0 is refused at the value with the allowed range, not read as "unchunked".
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  loss_chunks: 0
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.loss_chunks' '1\.\.1048576'
trainsim run s.yaml

# A dropout probability of 1 (every input dropped) is refused; [0, 1) is allowed.
file s.yaml <<'YAML'
name: t
model: llama2-7b
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  lora: {rank: 8, dropout: 1, targets: [q, v]}
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.dropout' '\[0, 1\)'
trainsim run s.yaml

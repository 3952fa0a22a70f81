# An unknown base format (fp4 is not modelled) is refused with the formats allowed.
file s.yaml <<'YAML'
name: t
model: llama2-7b
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  lora: {rank: 8, targets: all-linear, base: fp4}
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.base' 'nf4 \| nf4-dq \| int8 \| bf16'
trainsim run s.yaml

# A LoRA rank of 0 is refused at the value with the allowed range, not read as "no adapters".
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  lora: {rank: 0, targets: all-linear}
YAML
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.rank' '1\.\.65536'
trainsim run s.yaml

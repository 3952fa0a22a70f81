# LoRA without targets is refused (PEFT has no default for an unknown model), not defaulted.
file s.yaml <<'YAML'
name: t
model: llama2-7b
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  lora: {rank: 8}
YAML
expect 2 's\.yaml:7:[0-9]+' 'targets'
trainsim run s.yaml

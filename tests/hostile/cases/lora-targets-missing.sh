# LoRA without targets is refused (PEFT has no default for an unknown model), not defaulted.
training_scenario 'llama2-7b' 'lora: {rank: 8}'
expect 2 's\.yaml:7:[0-9]+' 'targets'
trainsim run s.yaml

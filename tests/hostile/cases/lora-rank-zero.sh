# A LoRA rank of 0 is refused at the value with the allowed range, not read as "no adapters".
training_scenario 'gpt2' 'lora: {rank: 0, targets: all-linear}'
expect 2 's\.yaml:7:[0-9]+' 'training\.lora\.rank' '1\.\.65536'
trainsim run s.yaml

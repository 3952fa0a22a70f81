# A target that names no linear role (here the embedding) is refused with the names allowed.
training_scenario 'llama2-7b' 'lora:' '  rank: 8' '  targets: [q_proj, embed_tokens]'
expect 2 's\.yaml:9:[0-9]+' 'training\.lora\.targets\[1\]' 'q_proj' "embed_tokens"
trainsim run s.yaml

# optimizer_states: lazy is torch.optim's zeros_like(param) in the first step; bf16 mixed precision
# without FSDP keeps Megatron-LM's/DeepSpeed's fp32 master copy with the states, made at init: refused.
training_scenario '{preset: gpt2, layers: 2}' 'precision: bf16' 'optimizer_states: lazy'
expect 2 's\.yaml:8:[0-9]+' 'training\.optimizer_states' 'master weights'
trainsim run s.yaml

# training.optimizer_impl names one of torch.optim's paths; anything else is refused with the list.
training_scenario '{preset: gpt2, layers: 2}' 'precision: fp32' 'optimizer_impl: multi-tensor'
expect 2 's\.yaml:8:[0-9]+' 'training\.optimizer_impl' 'foreach \| for-loop \| fused' "multi-tensor"
trainsim run s.yaml

# model_init takes none or cloned-layer; another value is refused with the values allowed.
training_scenario llama2-7b 'precision: bf16-true' 'model_init: clones'
expect 2 's\.yaml:8:[0-9]+' 'training\.model_init' 'none \| cloned-layer'
trainsim run s.yaml

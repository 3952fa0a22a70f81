# model_init: cloned-layer plays the block in the precision's dtype: a quantized LoRA base (built
# and quantized in the block's constructor) is refused at the key unless quantize_on_load: whole
# plays that quantizing build (here it is left at none).
training_scenario llama2-7b 'precision: bf16-true' 'model_init: cloned-layer' 'lora: {rank: 8, targets: all-linear, base: nf4}'
expect 2 's\.yaml:8:[0-9]+' 'training\.model_init' 'quantized LoRA base'
trainsim run s.yaml

# Hugging Face's Adafactor has one implementation (a loop over the tensors): foreach is refused.
training_scenario '{preset: gpt2, layers: 2}' \
    'precision: fp32' \
    'optimizer: adafactor' \
    'optimizer_impl: foreach'
expect 2 's\.yaml:9:[0-9]+' 'training\.optimizer_impl' 'adafactor has one implementation, for-loop'
trainsim run s.yaml

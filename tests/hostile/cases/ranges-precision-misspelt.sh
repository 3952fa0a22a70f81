# A precision that is not one of the eight is refused with the list, at its line.
file s.yaml <<'YAML'
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 1024
  precision: bf16_true
YAML
expect 2 's\.yaml:6:[0-9]+' 'training\.precision' 'bf16-true \| amp-fp16 \| amp-bf16 \| fp8'
trainsim run s.yaml

# fp8 on a device without FP8 tensor cores is refused at the precision, naming the device.
file s.yaml <<'YAML'
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 1024
  precision: fp8
YAML
expect 2 's\.yaml:6:[0-9]+' 'training\.precision' "fp8 needs FP8 tensor cores, and device 'a100-80gb' has none"
trainsim run s.yaml

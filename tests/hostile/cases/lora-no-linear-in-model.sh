# Targets that match no linear layer of the model (a CNN has none) are refused, as PEFT refuses
# target modules it cannot find.
file s.yaml <<'YAML'
name: t
model: resnet50
device: a100-80gb
training:
  micro_batch: 1
  lora: {rank: 8, targets: [q, v]}
YAML
expect 2 's\.yaml:6:[0-9]+' 'training\.lora\.targets' 'none of them'
trainsim run s.yaml

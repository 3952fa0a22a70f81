# Context parallelism splits a sequence's attention: a model without attention is refused.
file s.yaml <<'YAML'
name: t
model: resnet50
device: a100-80gb
training: {micro_batch: 1}
parallel: {context: 2}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.context' 'has none'
trainsim run s.yaml

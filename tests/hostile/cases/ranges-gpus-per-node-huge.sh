# cluster.gpus_per_node past 2^32 is a located range error.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
cluster: {gpus_per_node: 4294967297, nodes: 1}
YAML
expect 2 's\.yaml:5:[0-9]+' 'cluster\.gpus_per_node' '1\.\.16777216'
trainsim run s.yaml

# plan --gpus-per-node that contradicts the scenario's cluster.gpus_per_node is refused, naming both.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, global_batch: 8}
parallel: {data: 8}
cluster: {nodes: 2, gpus_per_node: 4}
YAML
expect 2 '--gpus-per-node' "the scenario's cluster\.gpus_per_node is 4"
trainsim plan s.yaml --gpus 8 --gpus-per-node 8

# cluster.oversubscription above 1 is between pods: without cluster.pod_nodes it is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 16}
cluster:
  nodes: 2
  gpus_per_node: 8
  oversubscription: 7
YAML
expect 2 's\.yaml:9:21' 'cluster\.oversubscription' 'pod_nodes'
trainsim run s.yaml

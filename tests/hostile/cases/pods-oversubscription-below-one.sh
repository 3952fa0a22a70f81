# cluster.oversubscription is a downlink to uplink ratio of at least 1: 0.5 is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 16}
cluster: {nodes: 2, gpus_per_node: 8, pod_nodes: 1, oversubscription: 0.5}
YAML
expect 2 's\.yaml:6:[0-9]+' 'cluster\.oversubscription' 'ratio from 1 to 1024'
trainsim run s.yaml

# cluster.collective_sms counts SMs: a negative count is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 8}
cluster: {nodes: 1, gpus_per_node: 8, collective_sms: -4}
YAML
expect 2 's\.yaml:6:[0-9]+' 'cluster\.collective_sms'
trainsim run s.yaml

# A link with no bandwidth is refused at the figure.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 16}
cluster: {gpus_per_node: 8, nodes: 2, inter_node: {preset: ib-hdr, bandwidth: 0GB/s}}
YAML
expect 2 's\.yaml:6:[0-9]+' 'cluster\.inter_node\.bandwidth'
trainsim run s.yaml

# A link latency of a million seconds is outside 0..1 s and refused where it is written.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 16}
cluster: {gpus_per_node: 8, nodes: 2, inter_node: {preset: ib-hdr, latency: 1000000s}}
YAML
expect 2 's\.yaml:6:[0-9]+' 'cluster\.inter_node\.latency' '1 s'
trainsim run s.yaml

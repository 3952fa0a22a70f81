# A section made by --set alone is blamed on the --set argument, not on the scenario file.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 '^error: --set cluster\.nodes=3' 'cluster'
trainsim run s.yaml --set cluster.nodes=3

# cluster.jitter is a mapping {distribution, cv}: a bare number is refused at the key.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 2}
cluster:
  jitter: 0.05
YAML
expect 2 's\.yaml:7:[0-9]+' 'cluster\.jitter' 'mapping'
trainsim run s.yaml

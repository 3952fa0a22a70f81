# cluster.jitter.cv is a coefficient of variation from 0 to 1: a negative one is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 2}
cluster:
  jitter: {cv: -0.1}
YAML
expect 2 's\.yaml:7:[0-9]+' 'cluster\.jitter\.cv' 'coefficient of variation'
trainsim run s.yaml

# cluster.jitter.distribution is normal or lognormal: another word is refused, listing both.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 2}
cluster:
  jitter:
    distribution: weibull
    cv: 0.02
YAML
expect 2 's\.yaml:8:[0-9]+' 'cluster\.jitter\.distribution' 'lognormal'
trainsim run s.yaml

# NaN is not a FLOP rate.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: a100-80gb, peak_flops: .nan}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.peak_flops'
trainsim run s.yaml

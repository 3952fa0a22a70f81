# A FLOP rate so small that no duration is finite is bad input, located at the figure.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: a100-80gb, peak_flops: 1e-300TFLOPS}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.peak_flops' '1 GFLOP/s'
trainsim run s.yaml

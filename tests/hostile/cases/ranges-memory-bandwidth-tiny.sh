# A memory bandwidth of 1e-300 GB/s is bad input, located at the figure.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: a100-80gb, memory_bandwidth: 1e-300GB/s}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.memory_bandwidth' '1 GB/s'
trainsim run s.yaml

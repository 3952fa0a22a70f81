# An astronomically large (but finite) FLOP rate is refused by the documented range.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {memory: 80GiB, peak_flops: 1e30TFLOPS, memory_bandwidth: 2TB/s}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.peak_flops' '1e21'
trainsim run s.yaml

# A custom device with 1 KB of memory is below the 1 MiB floor.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {memory: 1KB, peak_flops: 100TFLOPS, memory_bandwidth: 1TB/s}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.memory' '1 MiB'
trainsim run s.yaml

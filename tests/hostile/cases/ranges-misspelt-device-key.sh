# A misspelt key inside a device mapping names the key it probably means.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {memory: 80GiB, peak_flop: 300TFLOPS, memory_bandwidth: 2TB/s}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' "unknown key 'peak_flop'" "did you mean 'peak_flops'"
trainsim run s.yaml

# A negative SM count is outside device.sm_count's 0..65536 (0 turns the GEMM shape model off).
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: a100-80gb, sm_count: -4}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.sm_count' '65536'
trainsim run s.yaml

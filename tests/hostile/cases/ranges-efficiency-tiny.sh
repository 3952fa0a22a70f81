# A matmul efficiency of 1e-300 would make every kernel take forever; it is below the floor.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: a100-80gb, matmul_efficiency: 1e-300}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.matmul_efficiency' '0\.001'
trainsim run s.yaml

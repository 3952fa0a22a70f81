# The fuzzer's finding: `hf_config: ..` aborted with an uncaught std::ios_base::failure.
mkdir -p sub
file sub/s.yaml <<'YAML'
model:
  hf_config: ..
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 'sub/s\.yaml:2:14: model\.hf_config: .sub/\.\.. is a directory'
trainsim run sub/s.yaml

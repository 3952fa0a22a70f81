# A device file that is a directory is named at device.file.
mkdir -p dev
file s.yaml <<'YAML'
model: gpt2
device: {file: dev}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:2:16: device\.file: .dev. is a directory'
trainsim run s.yaml

# {file: DIR} for the model names the directory at the key (once exit 1: basic_filebuf::underflow).
mkdir -p models
file s.yaml <<'YAML'
name: t
model: {file: models}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:2:15: model\.file: .models. is a directory'
trainsim run s.yaml

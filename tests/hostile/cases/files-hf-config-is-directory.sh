# {hf_config: DIR} names the directory in a located message instead of an uncaught ios failure.
mkdir -p cfgdir
file s.yaml <<'YAML'
name: t
model: {hf_config: cfgdir}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:2:[0-9]+' 'is a directory'
trainsim run s.yaml

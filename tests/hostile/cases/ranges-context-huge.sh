# A context degree past the device limit is refused at the parallel mapping, without overflow.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 1024, attention: flash}
parallel: {data: 1024, tensor: 1024, pipeline: 16, context: 1048576}
YAML
expect 2 's\.yaml:5:[0-9]+' 'data x tensor x pipeline x context'
trainsim run s.yaml

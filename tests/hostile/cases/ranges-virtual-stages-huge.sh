# Virtual pipeline stages have a documented range too (1..1024).
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {pipeline: 2, schedule: interleaved, virtual_stages: 4294967298}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.virtual_stages' '1\.\.1024'
trainsim run s.yaml

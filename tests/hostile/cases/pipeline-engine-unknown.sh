# parallel.pipeline_engine names a runtime trainsim does not model: refused at the value,
# listing the two it does.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  gradient_accumulation: 4
  seq_len: 128
parallel:
  pipeline: 2
  pipeline_engine: pipedream
YAML
expect 2 's\.yaml:10:[0-9]+' 'parallel\.pipeline_engine' 'deepspeed'
trainsim run s.yaml

# DeepSpeed's PipelineEngine refuses ZeRO-2 and ZeRO-3: so does trainsim, at the engine key.
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
  data: 2
  zero: 2
  pipeline_engine: deepspeed
YAML
expect 2 's\.yaml:12:[0-9]+' 'parallel\.pipeline_engine' 'ZeRO-2'
trainsim run s.yaml

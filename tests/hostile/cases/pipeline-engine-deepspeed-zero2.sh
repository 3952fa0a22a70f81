# DeepSpeed's PipelineEngine refuses ZeRO-2 and ZeRO-3: so does trainsim, at the engine key.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  pipeline: 2' '  data: 2' \
  '  zero: 2' '  pipeline_engine: deepspeed'
expect 2 's\.yaml:12:[0-9]+' 'parallel\.pipeline_engine' 'ZeRO-2'
trainsim run s.yaml

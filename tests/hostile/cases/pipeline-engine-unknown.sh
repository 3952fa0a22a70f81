# parallel.pipeline_engine names a runtime trainsim does not model: refused at the value,
# listing the two it does.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  pipeline: 2' \
  '  pipeline_engine: pipedream'
expect 2 's\.yaml:10:[0-9]+' 'parallel\.pipeline_engine' 'deepspeed'
trainsim run s.yaml

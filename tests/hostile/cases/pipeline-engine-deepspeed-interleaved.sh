# DeepSpeed's pipeline engine runs its own 1F1B-order schedule: asking it for Megatron's
# interleaved schedule is refused at the key, naming the schedule it needs.
training_scenario gpt2 'gradient_accumulation: 4' -- 'parallel:' '  pipeline: 2' \
  '  schedule: interleaved' '  pipeline_engine: deepspeed'
expect 2 's\.yaml:11:[0-9]+' 'parallel\.pipeline_engine' 'schedule: 1f1b'
trainsim run s.yaml

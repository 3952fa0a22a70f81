# DeepSpeed's pipeline engine runs its own 1F1B-order schedule: asking it for Megatron's
# interleaved schedule is refused at the key, naming the schedule it needs.
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
  schedule: interleaved
  pipeline_engine: deepspeed
YAML
expect 2 's\.yaml:11:[0-9]+' 'parallel\.pipeline_engine' 'schedule: 1f1b'
trainsim run s.yaml

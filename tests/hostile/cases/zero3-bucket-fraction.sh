# parallel.zero3.prefetch_bucket_size counts parameter elements: a fraction is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel:
  data: 2
  zero: 3
  zero3:
    prefetch_bucket_size: 2.5
YAML
expect 2 's\.yaml:9:[0-9]+' 'parallel\.zero3\.prefetch_bucket_size' 'whole number'
trainsim run s.yaml

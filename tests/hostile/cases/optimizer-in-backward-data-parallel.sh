# optimizer_in_backward with data parallelism (DDP's bucketed all-reduce) is refused.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, optimizer_in_backward: true}
parallel: {data: 2}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer_in_backward' 'parallel\.data must be 1'
trainsim run s.yaml

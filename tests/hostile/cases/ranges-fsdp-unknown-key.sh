# parallel.fsdp: an unknown key inside fsdp
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel: {data: 2, fsdp: {reshard_after_backward: true}}
YAML
expect 2 's.yaml:5:[0-9]+: .*reshard_after_backward'
trainsim run s.yaml

# parallel.fsdp.flat_parameter: a value that is not a boolean is refused at the key
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel: {data: 2, fsdp: {flat_parameter: per-unit}}
YAML
expect 2 's.yaml:5:[0-9]+: .*parallel.fsdp.flat_parameter'
trainsim run s.yaml

# parallel.fsdp.unshard: copy contradicts flat_parameter: true (FSDP1's FlatParameter is a view of
# its gather's output) and is refused at the key
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel: {data: 2, fsdp: {flat_parameter: true, unshard: copy}}
YAML
expect 2 's.yaml:5:[0-9]+: .*parallel.fsdp.unshard: expected view with flat_parameter: true'
trainsim run s.yaml

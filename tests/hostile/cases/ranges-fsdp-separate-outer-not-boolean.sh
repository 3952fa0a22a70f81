# parallel.fsdp.separate_outer_layers: a value that is not a boolean is refused at the key
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel: {data: 2, fsdp: {separate_outer_layers: embeddings}}
YAML
expect 2 's.yaml:5:[0-9]+: .*parallel.fsdp.separate_outer_layers'
trainsim run s.yaml

# parallel.fsdp.gradient_sync: a value outside every-micro-batch | last-micro-batch is refused at the key
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 2, seq_len: 128, precision: bf16}
parallel: {data: 2, fsdp: {gradient_sync: never}}
YAML
expect 2 's.yaml:5:[0-9]+: .*parallel.fsdp.gradient_sync'
trainsim run s.yaml

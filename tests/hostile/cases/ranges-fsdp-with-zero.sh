# parallel.fsdp: FSDP beside a ZeRO stage is refused at the fsdp key
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel: {data: 4, zero: 3, fsdp: true}
YAML
expect 2 's.yaml:5:[0-9]+: .*parallel.fsdp.*set parallel.zero: 0'
trainsim run s.yaml

# parallel.fsdp: a shard_size that does not divide data is located at the value
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel: {data: 4, fsdp: {shard_size: 3}}
YAML
expect 2 's.yaml:5:[0-9]+: .*parallel.fsdp.shard_size.*must divide parallel.data \(4\)'
trainsim run s.yaml

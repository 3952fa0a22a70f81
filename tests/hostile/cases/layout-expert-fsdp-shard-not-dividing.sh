# With parallel.fsdp each shard group holds whole expert groups: expert must divide shard_size.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 8, expert: 4, fsdp: {shard_size: 2}}
YAML
expect 2 's\.yaml:5:[0-9]+: parallel\.expert: ' 'must divide the FSDP shard group \(shard_size 2\)'
trainsim run s.yaml

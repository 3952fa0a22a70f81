# A --set key inside `parallel.fsdp: false` is refused at the argument: false is no mapping to
# add to (`fsdp: true` is: the empty mapping it stands for).
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 2, fsdp: false}
YAML
expect 2 "^error: --set parallel\\.fsdp\\.shard_size=2:1:1: parallel\\.fsdp\\.shard_size: 'fsdp' is false, not a mapping; set 'fsdp' itself$"
trainsim run s.yaml --set parallel.fsdp.shard_size=2

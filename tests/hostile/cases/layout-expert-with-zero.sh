# Expert parallelism is modelled with ZeRO 0 or 1 (Megatron-Core's distributed optimizer):
# ZeRO-2 is refused at parallel.zero.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 8, expert: 8, zero: 2}
YAML
expect 2 's\.yaml:5:38: parallel\.zero: .*zero 0 or 1 .*got zero 2'
trainsim run s.yaml

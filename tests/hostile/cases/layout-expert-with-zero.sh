# Expert parallelism is modelled without ZeRO: refused at parallel.zero.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 8, expert: 8, zero: 1}
YAML
expect 2 's\.yaml:5:38: parallel\.zero: .*zero: 0 only'
trainsim run s.yaml

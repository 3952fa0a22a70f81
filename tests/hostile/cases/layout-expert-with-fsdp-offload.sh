# Expert parallelism beside FSDP CPU offload stays refused, located at parallel.expert.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 2, expert: 2, fsdp: {offload: cpu}}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.expert' 'parallel\.fsdp\.offload: cpu is not supported yet'
trainsim run s.yaml

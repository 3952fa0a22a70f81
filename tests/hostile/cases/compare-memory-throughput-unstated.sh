# compare-memory: a rate printed for a run on several GPUs needs the case to say whose it is.
file measured.yaml <<'YAML'
cases:
  - {id: a, measured: {peak_memory_GiB: 1.5, kind: 'peak memory reserved', tokens_per_s: 900}}
YAML
file s8.yaml <<'YAML'
name: eight
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, precision: bf16, optimizer: adamw}
parallel: {data: 8}
cluster: {nodes: 1, gpus_per_node: 8, intra_node: nvlink3}
YAML
file cases.yaml <<'YAML'
cases:
  - {id: a, scenario: s8.yaml}
YAML
expect 2 "^error: cases\.yaml:2:5: cases\[0\]\.throughput: expected throughput: per-gpu, total or none for 'a'"
trainsim compare-memory cases.yaml --measured measured.yaml

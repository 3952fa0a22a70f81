# parallel.tp_comm_overlap overlaps sequence parallelism's all-gathers and reduce-scatters with
# their GEMMs (Megatron-LM asserts --sequence-parallel with --tp-comm-overlap): without
# sequence_parallel it is refused at the key.
file s.yaml <<'YAML'
name: overlap without sequence parallelism
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
parallel:
  tensor: 2
  tp_comm_overlap: true
cluster:
  gpus_per_node: 2
YAML
expect 2 's\.yaml:9:[0-9]+' 'parallel\.tp_comm_overlap' 'sequence_parallel'
trainsim run s.yaml

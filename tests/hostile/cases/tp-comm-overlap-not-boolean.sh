# tp_comm_overlap takes true or false; a number is refused at the value.
file s.yaml <<'YAML'
name: overlap not a boolean
model: gpt2
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
parallel:
  tensor: 2
  sequence_parallel: true
  tp_comm_overlap: 4
cluster:
  gpus_per_node: 2
YAML
expect 2 's\.yaml:10:[0-9]+' 'parallel\.tp_comm_overlap'
trainsim run s.yaml

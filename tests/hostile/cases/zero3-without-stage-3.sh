# parallel.zero3 sets ZeRO stage 3's fetch: beside zero: 1 it is refused, naming both keys.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel:
  data: 2
  zero: 1
  zero3: {max_live_parameters: 1e8}
YAML
expect 2 's\.yaml:8:[0-9]+' 'parallel\.zero3' 'parallel\.zero: 3'
trainsim run s.yaml

# A pipeline degree of 2^32 + 1 is refused by its range, not compared with the blocks.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {pipeline: 4294967297}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.pipeline' '1\.\.1048576'
trainsim run s.yaml

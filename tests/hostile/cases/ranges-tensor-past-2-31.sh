# A tensor-parallel degree past 2^31 is refused by its range where it is read.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {tensor: 2147483648}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.tensor' '1\.\.1048576'
trainsim run s.yaml

# A negative degree is refused at the value, with the accepted range.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: -4}
YAML
expect 2 's\.yaml:5:[0-9]+' 'parallel\.data' '1\.\.1048576'
trainsim run s.yaml

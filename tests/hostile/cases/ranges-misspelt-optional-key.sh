# An unknown optional key close to an expected one gets the suggestion too.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {tesnor: 2}
YAML
expect 2 's\.yaml:5:[0-9]+' "unknown key 'tesnor'" "did you mean 'tensor'"
trainsim run s.yaml

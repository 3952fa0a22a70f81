# A flash-attention efficiency is a fraction of the 16-bit peak: above 1 is refused at the value.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: h100-80gb, flash_efficiency: 1.2}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.flash_efficiency'
trainsim run s.yaml

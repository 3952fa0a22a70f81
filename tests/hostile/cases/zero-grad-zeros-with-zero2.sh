# zero_grad: zeros keeps unsharded gradients between steps; ZeRO-2 shards them: refused.
file s.yaml <<'YAML'
name: t
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, zero_grad: zeros}
parallel: {data: 2, zero: 2}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.zero_grad' 'ZeRO-2/3 and FSDP'
trainsim run s.yaml

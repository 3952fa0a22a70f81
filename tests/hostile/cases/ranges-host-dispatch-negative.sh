# A negative host dispatch time would let the host issue kernels faster than free; it is
# outside 0..1 s and refused where it is written.
file s.yaml <<'YAML'
name: t
model: gpt2
device: {preset: a100-80gb, host_dispatch: -5us}
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:3:[0-9]+' 'device\.host_dispatch'
trainsim run s.yaml

# 2^31 + 1 micro-batches (with the op limit raised to allow them) is refused by the ranges of
# gradient_accumulation and limits.max_ops, not cut to a negative 32-bit count.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128, gradient_accumulation: 2147483649}
limits: {max_ops: 100000000000}
YAML
expect 2 's\.yaml:[45]:[0-9]+' 'gradient_accumulation|max_ops' '1\.\.1000000000'
trainsim run s.yaml

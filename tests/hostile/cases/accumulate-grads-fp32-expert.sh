# accumulate_grads: fp32 all-reduces every gradient over the data ranks: with expert parallelism
# the routed experts reduce over their own group, which it does not model: refused.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128, accumulate_grads: fp32}
parallel: {data: 8, expert: 8}
YAML
expect 2 's\.yaml:4:[0-9]+: training\.accumulate_grads: .*parallel\.expert'
trainsim run s.yaml

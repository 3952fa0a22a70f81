# An expert-parallel degree on a dense model is refused at parallel.expert.
file s.yaml <<'YAML'
name: t
model: gpt2
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
parallel: {data: 2, expert: 2}
YAML
expect 2 's\.yaml:5:29: parallel\.expert: .*has no MoE layers'
trainsim run s.yaml

# parallel.fsdp: DeepSpeed-style training.offload beside FSDP is refused at training.offload, naming FSDP's own
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16, offload: {optimizer: cpu}}
parallel: {data: 2, fsdp: true}
YAML
expect 2 's.yaml:4:[0-9]+: .*training.offload.*parallel.fsdp.offload: cpu'
trainsim run s.yaml

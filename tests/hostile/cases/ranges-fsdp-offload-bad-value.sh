# parallel.fsdp.offload: a value other than none or cpu names the choices
file s.yaml <<'YAML'
name: fsdp
model: {preset: gpt2, layers: 2}
device: a100-80gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: bf16}
parallel: {data: 2, fsdp: {offload: nvme}}
YAML
expect 2 's.yaml:5:[0-9]+: .*parallel.fsdp.offload.*cpu'
trainsim run s.yaml

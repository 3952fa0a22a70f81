# A target that names no linear role (here the embedding) is refused with the names allowed.
file s.yaml <<'YAML'
name: t
model: llama2-7b
device: a100-80gb
training:
  micro_batch: 1
  seq_len: 128
  lora:
    rank: 8
    targets: [q_proj, embed_tokens]
YAML
expect 2 's\.yaml:9:[0-9]+' 'training\.lora\.targets\[1\]' 'q_proj' "embed_tokens"
trainsim run s.yaml

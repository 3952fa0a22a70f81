# import llm-foundry: an OmegaConf interpolation that refers to itself is an error at the key,
# not an endless loop or a crash.
file mpt.yaml <<'EOF2'
a: ${b}
b: ${a}
model:
  name: mpt_causal_lm
  max_seq_len: ${a}
global_train_batch_size: 8
EOF2
expect 2 "^error: mpt\.yaml:5:16: model\.max_seq_len: interpolation '\\$\{[ab]\}' nests deeper than 8 references$"
trainsim import llm-foundry mpt.yaml --gpus 8

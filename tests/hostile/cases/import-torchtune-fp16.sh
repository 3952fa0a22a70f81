# import torchtune: dtype fp16, which torchtune's recipes refuse: an error at the value, not a
# silent bf16.
file ft.yaml <<'EOF2'
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
  lora_attn_modules: ['q_proj', 'v_proj']
optimizer:
  _component_: torch.optim.AdamW
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss
batch_size: 2
gradient_accumulation_steps: 1
dtype: fp16
EOF2
expect 2 "^error: ft\.yaml:10:8: dtype: expected bf16 or fp32 \(torchtune's recipes refuse fp16\), got 'fp16'$"
trainsim import torchtune ft.yaml --gpus 1 --seq-len 2048

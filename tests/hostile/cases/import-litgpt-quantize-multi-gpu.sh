# import litgpt: quantize on several GPUs, which LitGPT refuses: an error at the key, not a
# silently unquantized or single-GPU run.
file lora.yaml <<'EOF2'
checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf
precision: bf16-true
quantize: bnb.nf4
devices: 2
lora_r: 8
EOF2
expect 2 "^error: lora\.yaml:3:11: quantize: quantization on several GPUs \(LitGPT refuses it too\) is not supported by trainsim yet$"
trainsim import litgpt lora.yaml --seq-len 512

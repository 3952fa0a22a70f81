# import trl: dtype auto takes the checkpoint's dtype, which the config does not hold: an error
# at the value, not a guessed precision.
file sft.yaml <<'EOF2'
model_name_or_path: meta-llama/Llama-2-7b-hf
dtype: auto
use_peft: true
EOF2
expect 2 "^error: sft\.yaml:2:8: dtype: 'auto' takes the checkpoint's dtype, which the config does not hold: write bfloat16, float16 or float32$"
trainsim import trl sft.yaml

# import torchtune: broken YAML is located, with yaml-cpp's reason.
file ft.yaml <<'EOF2'
model:
  _component_: [torchtune.models.llama2.llama2_7b
batch_size: 2
EOF2
expect 2 "^error: ft\.yaml:[0-9]+:[0-9]+: malformed YAML: "
trainsim import torchtune ft.yaml --seq-len 2048

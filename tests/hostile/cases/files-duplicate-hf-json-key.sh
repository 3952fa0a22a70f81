# A key twice in config.json (JSON parsers keep the last, yaml-cpp kept the first): refused.
file hf/config.json <<'JSON'
{
  "model_type": "llama",
  "hidden_size": 256,
  "intermediate_size": 512,
  "num_attention_heads": 4,
  "num_hidden_layers": 2,
  "vocab_size": 1000,
  "hidden_size": 512
}
JSON
file s.yaml <<'YAML'
model: {hf_config: hf/config.json}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 "hf/config\.json:8:3: model\.hf_config: duplicate key 'hidden_size' \(first at line 3, column 3\)"
trainsim run s.yaml

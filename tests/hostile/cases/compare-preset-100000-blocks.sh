# A preset with 100,000 blocks (about 700,000 layers) took 12 s to run and 22 s and 2.2 GB to
# diagnose; it is refused before it is built, naming the limit and how to raise it.
file big.yaml <<'YAML'
name: gpt2 with 100k blocks
model: {preset: gpt2, layers: 100000}
device: v100-16gb
training: {micro_batch: 1, seq_len: 128, precision: fp16, optimizer: adamw}
YAML
expect 2 "^error: big\.yaml:2:31: model\.layers: this model's 100000 blocks of [0-9]+ layers would hold [0-9]+ layers in all, more than limits\.max_layers = 25000"
trainsim diagnose big.yaml

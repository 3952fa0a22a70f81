# The same part given twice (under another name) is refused, naming both files.
file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: v100-16gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: fp16}
YAML
file sweep.yaml <<'YAML'
base: {file: tiny.yaml}
axes:
  training.micro_batch: {range: [1, 40], step: 1}
YAML
"$TS" sweep sweep.yaml --shard 1/2 --csv s1.csv -j 1 > /dev/null
cp s1.csv copy.csv
expect 2 'copy\.csv:1:1: shard 1/2 is given twice \(also s1\.csv\)'
trainsim merge out.csv s1.csv copy.csv

# Two shards of sweeps with the same axes but different bases: the headers agree, the
# fingerprints do not, and the merge is refused (it used to join them into one file).
for n in 2 4; do
file base$n.yaml <<YAML
name: tiny
model: {preset: gpt2, layers: $n}
device: v100-16gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: fp16}
YAML
file sweep$n.yaml <<YAML
base: {file: base$n.yaml}
axes:
  training.micro_batch: {range: [1, 40], step: 1}
YAML
done
"$TS" sweep sweep2.yaml --shard 1/2 --csv a.csv -j 1 > /dev/null
"$TS" sweep sweep4.yaml --shard 2/2 --csv b.csv -j 1 > /dev/null
expect 2 'b\.csv:1:1: shard 2/2 of another sweep: fingerprint [0-9a-f]{16}, a\.csv.s is [0-9a-f]{16}'
trainsim merge out.csv a.csv b.csv

# Expert parallelism with ZeRO-1 shards element-wise optimizer states; Adafactor's per-tensor
# states are refused at training.optimizer.
file s.yaml <<'YAML'
name: t
model: mixtral-8x7b
device: h100-80gb
training: {micro_batch: 1, seq_len: 128, optimizer: adafactor}
parallel: {data: 8, expert: 8, zero: 1}
YAML
expect 2 's\.yaml:4:[0-9]+' 'training\.optimizer' "keeps per-tensor states: use parallel.zero 0"
trainsim run s.yaml

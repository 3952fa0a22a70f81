# A binary model file (a gzip header) is refused at its key, saying where the bad byte is.
printf '\x1f\x8b\x08\x00name: x\n' >m.yaml
file s.yaml <<'YAML'
model: {file: m.yaml}
device: a100-80gb
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:1:15: model\.file: .m\.yaml. is not UTF-8 text: byte 2 is 0x8B \(line 1, column 2\)'
trainsim run s.yaml

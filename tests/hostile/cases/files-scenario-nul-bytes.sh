# NUL bytes (a binary or a torn file) are not text: located at the first one.
printf 'model: gpt2\ndevice: a100-80gb\x00\x00\ntraining: {micro_batch: 1, seq_len: 128}\n' >s.yaml
expect 2 's\.yaml:2:18: is not text: byte 30 is a NUL'
trainsim run s.yaml

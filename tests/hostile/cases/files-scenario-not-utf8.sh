# A Latin-1 scenario (e acute as byte 0xE9) is located at the byte, not parsed as garbage.
printf 'name: caf\xe9\nmodel: gpt2\ndevice: a100-80gb\ntraining: {micro_batch: 1, seq_len: 128}\n' >s.yaml
expect 2 's\.yaml:1:10: is not UTF-8 text: byte 10 is 0xE9'
trainsim run s.yaml

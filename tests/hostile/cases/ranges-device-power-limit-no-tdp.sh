# A power limit on a device with no TDP (GH200's module power covers CPU and GPU) names the
# missing key rather than ignoring the limit.
file s.yaml <<'YAML'
name: t
model: gpt2
device:
  preset: gh200-96gb
  power_limit: 500W
training: {micro_batch: 1, seq_len: 128}
YAML
expect 2 's\.yaml:5:[0-9]+' 'device\.power_limit' 'no TDP' 'device\.tdp'
trainsim run s.yaml

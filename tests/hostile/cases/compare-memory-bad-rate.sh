# compare-memory: a measured throughput that is not a positive number is refused at the value.
file measured.yaml <<'YAML'
cases:
  - id: a
    measured: {peak_memory_GiB: 2, kind: 'peak memory reserved', tokens_per_s: zero}
YAML
file cases.yaml <<'YAML'
cases:
  - {id: a, scenario: s.yaml}
YAML
expect 2 "^error: measured\.yaml:3:80: cases\[0\]\.measured\.tokens_per_s: expected a positive finite rate or null"
trainsim compare-memory cases.yaml --measured measured.yaml

# compare-memory: a measured peak that is not a positive number is refused at the value.
file measured.yaml <<'YAML'
cases:
  - id: a
    measured: {peak_memory_GiB: -2, kind: 'peak memory reserved'}
YAML
file cases.yaml <<'YAML'
cases:
  - {id: a, scenario: s.yaml}
YAML
expect 2 "^error: measured\.yaml:3:33: cases\[0\]\.measured\.peak_memory_GiB: expected a positive finite number of GiB or null"
trainsim compare-memory cases.yaml --measured measured.yaml

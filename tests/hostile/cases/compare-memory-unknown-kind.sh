# compare-memory: a case's kind outside allocated | active | reserved | nvidia-smi is refused at
# the value.
file measured.yaml <<'YAML'
cases:
  - {id: a, group: g, measured: {peak_memory_GiB: 1.5, kind: 'peak memory reserved'}}
YAML
file cases.yaml <<'YAML'
cases:
  - {id: a, scenario: s.yaml, kind: peak}
YAML
expect 2 "^error: cases\.yaml:2:37: cases\[0\]\.kind: expected one of allocated \| active \| reserved \| nvidia-smi, got 'peak'"
trainsim compare-memory cases.yaml --measured measured.yaml

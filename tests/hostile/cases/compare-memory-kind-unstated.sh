# compare-memory: a source that does not say which figure it reports needs the case to say it.
file measured.yaml <<'YAML'
cases:
  - {id: a, measured: {peak_memory_GiB: 1.5, kind: 'peak memory (alloc vs reserved not stated)'}}
YAML
file cases.yaml <<'YAML'
cases:
  - {id: a, scenario: s.yaml}
YAML
expect 2 "^error: cases\.yaml:2:5: cases\[0\]\.kind: expected a kind for 'a': its source does not say"
trainsim compare-memory cases.yaml --measured measured.yaml

# compare-memory: a case that names another kind than the one its source states is refused (a
# reserved figure compared with the allocated peak would hide the allocator's cache).
file measured.yaml <<'YAML'
cases:
  - {id: a, group: g, measured: {peak_memory_GiB: 1.5, kind: 'peak memory reserved'}}
YAML
file cases.yaml <<'YAML'
cases:
  - {id: a, scenario: s.yaml, kind: allocated}
YAML
expect 2 "^error: cases\.yaml:2:5: cases\[0\]\.kind: expected the kind the source states for 'a' \(reserved\), got allocated"
trainsim compare-memory cases.yaml --measured measured.yaml

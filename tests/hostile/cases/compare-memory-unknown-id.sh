# compare-memory: a case whose id the measured set lacks is refused at the case, before anything
# is simulated.
file measured.yaml <<'YAML'
cases:
  - {id: a, measured: {peak_memory_GiB: 1.5, kind: 'peak memory reserved'}}
YAML
file cases.yaml <<'YAML'
cases:
  - {id: b, scenario: s.yaml}
YAML
expect 2 "^error: cases\.yaml:2:5: cases\[0\]\.id: expected an id of the measured set; 'b' is not in it"
trainsim compare-memory cases.yaml --measured measured.yaml

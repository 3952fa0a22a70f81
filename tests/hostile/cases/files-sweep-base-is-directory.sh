# A sweep base that is a directory: one located error, not every point invalid.
mkdir -p base
file grid.yaml <<'YAML'
base: {file: base}
axes:
  training.micro_batch: [1, 2]
YAML
expect 2 'grid\.yaml:1:14: base\.file: .base. is a directory'
trainsim sweep grid.yaml

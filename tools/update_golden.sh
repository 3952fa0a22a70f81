#!/usr/bin/env bash
# Regenerates tests/golden/ from the current build. Review `git diff tests/golden` before
# committing: every changed figure should be explained by the change you made.
set -euo pipefail
cd "$(dirname "$0")/.."
trainsim=${1:-build/tools/trainsim}
find scenarios -name '*.yaml' -not -path 'scenarios/sweeps/*' | sort | while read -r scenario; do
  name=$(echo "${scenario#scenarios/}" | sed 's|/|__|g; s|\.yaml$||')
  for format in text json; do
    ext=$([ "$format" = text ] && echo txt || echo json)
    { NO_COLOR=1 "$trainsim" run "$scenario" --format "$format"; echo "exit $?"; } > "tests/golden/$name.$ext" || true
  done
done
echo "updated $(ls tests/golden/*.txt | wc -l) golden scenarios"

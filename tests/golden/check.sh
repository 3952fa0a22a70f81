#!/usr/bin/env bash
# Golden test: runs `trainsim run` on one scenario (text and JSON) and compares the output and
# the exit code with the files under tests/golden/. Regenerate with tools/update_golden.sh after
# a deliberate change, and review the diff.
# usage: check.sh TRAINSIM SCENARIO   (run from the repository root)
set -u
trainsim=$1
scenario=$2
name=$(echo "${scenario#scenarios/}" | sed 's|/|__|g; s|\.yaml$||')
dir=tests/golden
status=0
for format in text json; do
  ext=$([ "$format" = text ] && echo txt || echo json)
  expected="$dir/$name.$ext"
  if [ ! -f "$expected" ]; then
    echo "missing golden file $expected (run tools/update_golden.sh)"
    exit 1
  fi
  actual=$(NO_COLOR=1 "$trainsim" run "$scenario" --format "$format"; echo "exit $?")
  if ! diff -u "$expected" <(printf '%s\n' "$actual") > /tmp/golden.$$.diff; then
    echo "golden mismatch for $scenario ($format):"
    head -60 /tmp/golden.$$.diff
    status=1
  fi
  rm -f /tmp/golden.$$.diff
done
exit $status

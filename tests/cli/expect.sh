#!/usr/bin/env bash
# expect.sh EXPECTED_EXIT PATTERN [PATTERN...] -- COMMAND [ARGS...]
# Runs COMMAND; fails unless it exits with EXPECTED_EXIT and its stdout+stderr match every
# PATTERN (grep -E). An empty PATTERN list checks only the exit code.
set -u
if [ $# -lt 3 ]; then
  echo "usage: expect.sh EXPECTED_EXIT [PATTERN...] -- COMMAND [ARGS...]" >&2
  exit 2
fi
expected=$1
shift
patterns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  patterns+=("$1")
  shift
done
if [ $# -lt 2 ]; then
  echo "expect.sh: missing '-- COMMAND'" >&2
  exit 2
fi
shift
output=$("$@" 2>&1)
code=$?
status=0
if [ "$code" -ne "$expected" ]; then
  echo "FAIL: exit code $code, expected $expected: $*" >&2
  status=1
fi
for p in "${patterns[@]+"${patterns[@]}"}"; do
  if ! printf '%s\n' "$output" | grep -Eq -- "$p"; then
    echo "FAIL: output does not match /$p/: $*" >&2
    status=1
  fi
done
if [ "$status" -ne 0 ]; then
  echo "--- output ---" >&2
  printf '%s\n' "$output" >&2
fi
exit $status

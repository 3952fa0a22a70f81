#!/usr/bin/env bash
# determinism.sh TRAINSIM -- runs `trainsim run --format json` twice on every scenario under
# scenarios/ and fails unless both runs print the same bytes and exit with the same code.
set -uo pipefail
ts=$1
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-determinism.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0 count=0
while IFS= read -r f; do
  count=$((count + 1))
  "$ts" run "$f" --format json >"$tmp/a" 2>&1; rc_a=$?
  "$ts" run "$f" --format json >"$tmp/b" 2>&1; rc_b=$?
  if [ "$rc_a" -ne "$rc_b" ] || ! cmp -s "$tmp/a" "$tmp/b"; then
    echo "not deterministic: $f (exit $rc_a vs $rc_b)"
    diff "$tmp/a" "$tmp/b" | head -n 20
    failed=1
  elif [ "$rc_a" -ne 0 ] && [ "$rc_a" -ne 3 ]; then
    echo "unexpected exit $rc_a for $f:"; head -n 5 "$tmp/a"
    failed=1
  fi
done < <(find scenarios -name '*.yaml' -not -path 'scenarios/sweeps/*' | sort)
[ "$count" -gt 0 ] || { echo "no scenarios found"; exit 1; }
[ "$failed" -eq 0 ] && echo "$count scenarios: identical JSON on two runs"
exit "$failed"

#!/usr/bin/env bash
# tools/fuzz_hunt.sh [SECONDS] [TARGET...] -- open-ended fuzzing for developers (never run by the
# test suite): each target (default: all) fuzzes for SECONDS / (number of targets) seconds
# (default 600 in all) from a new random seed, over the checked-in inputs and a corpus kept in
# build-fuzz/corpus/TARGET/ between hunts. Findings (crash, uncaught exception, sanitizer report,
# an input over 5 s or 2 GiB) are saved as regression inputs under
# tests/fuzz/regressions/TARGET/, which test_fuzz_regressions replays in every build and
# tools/fuzz.sh seeds from: rename each after what it caught and commit it with its fix.
# Exits 1 when anything was found. Needs clang++ and libclang-rt-14-dev.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/fuzz_common.sh
source tools/fuzz_common.sh

total=${1:-600}
[[ "$total" =~ ^[1-9][0-9]*$ ]] || { echo "usage: tools/fuzz_hunt.sh [SECONDS] [TARGET...]" >&2; exit 2; }
shift || true
if [ $# -gt 0 ]; then fuzz_targets=("$@"); fi
fuzz_require_toolchain
fuzz_build

per=$(( total / ${#fuzz_targets[@]} ))
(( per >= 1 )) || per=1
work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-fuzz-hunt.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
for t in "${fuzz_targets[@]}"; do
  [ -x "build-fuzz/tests/fuzz/fuzz_$t" ] || { echo "fuzz_hunt: unknown target '$t'" >&2; exit 2; }
  mkdir -p "build-fuzz/corpus/$t" "$work/$t/artifacts" "tests/fuzz/regressions/$t"
  fuzz_seed_files "$t" >"$work/$t/seeds.txt"
  echo "fuzz_hunt: fuzz_$t for ${per}s" >&2
  rc=0
  "build-fuzz/tests/fuzz/fuzz_$t" -seed=0 -max_total_time="$per" -timeout=5 -rss_limit_mb=2048 \
    -dict=tests/fuzz/trainsim.dict -artifact_prefix="$work/$t/artifacts/" -print_final_stats=1 \
    -seed_inputs="$(paste -sd, "$work/$t/seeds.txt")" "build-fuzz/corpus/$t" >"$work/$t.log" 2>&1 || rc=$?
  found=0
  for a in "$work/$t/artifacts"/*; do
    [ -f "$a" ] || continue
    cp "$a" "tests/fuzz/regressions/$t/"
    echo "fuzz_hunt: fuzz_$t: finding saved as tests/fuzz/regressions/$t/$(basename "$a")" >&2
    found=1
  done
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    echo "fuzz_hunt: fuzz_$t FAILED (exit $rc); log tail:" >&2
    tail -n 60 "$work/$t.log" >&2
    failed=1
  else
    grep -E "stat::number_of_executed_units" "$work/$t.log" >&2 || true
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz_hunt: findings above; reproduce with build-fuzz/tests/fuzz/fuzz_TARGET FILE" >&2
  exit 1
fi
echo "fuzz_hunt: no findings in ${total}s" >&2

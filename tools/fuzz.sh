#!/usr/bin/env bash
# tools/fuzz.sh [SECONDS] -- builds the libFuzzer targets (preset `fuzz`, in build-fuzz/) and
# fuzzes each target for SECONDS / (number of targets) seconds (default 120 in all).
# Seeds: the shipped scenarios and models, tests/fuzz/seeds/ and every saved finding in
# tests/fuzz/regressions/<target>/, copied to a scratch corpus; keys come from
# tests/fuzz/trainsim.dict. Exits non-zero on any finding (crash, uncaught exception, sanitizer
# report, input over 5 s or 2 GiB) and saves the input under tests/fuzz/regressions/<target>/
# so that test_fuzz_regressions replays it in every build.
# Needs clang++ and libclang-rt-14-dev; without them it fails, or exits 77 (ctest: skipped)
# when TRAINSIM_SKIP_FUZZ=1. JOBS (default 2) sets the build parallelism. FUZZ_SEED (default
# 20261203) fixes libFuzzer's random seed so a run (the test suite's smoke run in CI among them)
# explores the same inputs each time on a machine of the same speed; FUZZ_SEED=0 draws a new
# seed per run, for longer hunts.
set -euo pipefail
cd "$(dirname "$0")/.."

total=${1:-120}
targets=(scenario model hf_config overrides units)

missing=""
if ! command -v clang++ >/dev/null 2>&1; then
  missing="clang++ (apt-get install clang-14)"
else
  rt="$(clang++ -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a"
  [ -f "$rt" ] || missing="libFuzzer runtime $rt (apt-get install libclang-rt-14-dev)"
fi
if [ -n "$missing" ]; then
  if [ "${TRAINSIM_SKIP_FUZZ:-0}" = 1 ]; then
    echo "fuzz.sh: skipped (TRAINSIM_SKIP_FUZZ=1): missing $missing" >&2
    exit 77
  fi
  echo "fuzz.sh: cannot fuzz: missing $missing. Install it, or set TRAINSIM_SKIP_FUZZ=1 to skip." >&2
  exit 1
fi

echo "fuzz.sh: building the fuzz preset in build-fuzz/" >&2
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --parallel "${JOBS:-2}" --target "${targets[@]/#/fuzz_}" >/dev/null

per=$(( total / ${#targets[@]} ))
(( per >= 1 )) || per=1
work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

seed() {  # seed TARGET FILES...: copies files into the target's seed folder
  local t=$1; shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$work/$t/seeds/$(echo "$f" | tr / _)"; done
  return 0
}

failed=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/corpus" "$work/$t/seeds" "$work/$t/artifacts" "tests/fuzz/regressions/$t"
  shopt -s nullglob globstar
  case $t in
    scenario) seed "$t" scenarios/**/*.yaml tests/cli/data/*.yaml ;;
    model) seed "$t" models/**/*.yaml ;;
    hf_config) seed "$t" models/hf/**/*.json ;;
    *) seed "$t" tests/fuzz/seeds/"$t"/* ;;
  esac
  shopt -u nullglob globstar
  echo "fuzz.sh: fuzz_$t for ${per}s" >&2
  rc=0
  "build-fuzz/tests/fuzz/fuzz_$t" -seed="${FUZZ_SEED:-20261203}" -max_total_time="$per" -timeout=5 -rss_limit_mb=2048 \
    -dict=tests/fuzz/trainsim.dict -artifact_prefix="$work/$t/artifacts/" -print_final_stats=1 \
    "$work/$t/corpus" "$work/$t/seeds" "tests/fuzz/regressions/$t" >"$work/$t.log" 2>&1 || rc=$?
  found=0
  for a in "$work/$t/artifacts"/*; do
    [ -f "$a" ] || continue
    case $(basename "$a") in crash-*|timeout-*|oom-*|leak-*|deadly-*) ;; *) continue ;; esac
    cp "$a" "tests/fuzz/regressions/$t/"
    echo "fuzz.sh: fuzz_$t: finding saved as tests/fuzz/regressions/$t/$(basename "$a")" >&2
    found=1
  done
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    echo "fuzz.sh: fuzz_$t FAILED (exit $rc); log tail:" >&2
    tail -n 60 "$work/$t.log" >&2
    failed=1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/$t.log" | tail -n 1 >&2 || true
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz.sh: findings above; reproduce with build-fuzz/tests/fuzz/fuzz_TARGET FILE" >&2
  exit 1
fi
echo "fuzz.sh: no findings in ${total}s" >&2

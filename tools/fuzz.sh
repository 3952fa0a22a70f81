#!/usr/bin/env bash
# tools/fuzz.sh [RUNS] -- the deterministic fuzz run that gates the test suite (ctest's
# fuzz_smoke): builds the libFuzzer targets (preset `fuzz`, in build-fuzz/) and runs each target
# for exactly RUNS inputs (default 4000) from a fixed seed over the checked-in inputs only
# (tools/fuzz_common.sh lists them, sorted, given in that order with -seed_inputs), with an empty scratch corpus. Same sources, same
# inputs, same result on every machine: no time limit decides what is tried, and the run writes
# nothing into the source tree. A finding fails the run (exit 1) and is kept under
# build-fuzz/findings/TARGET/ with the command that reproduces it; commit it under
# tests/fuzz/regressions/TARGET/ together with its fix. Open-ended hunting with random seeds is
# tools/fuzz_hunt.sh. Needs clang++ and libclang-rt-14-dev (exit 77, skipped, when
# TRAINSIM_SKIP_FUZZ=1 and they are missing). JOBS (default 2) sets the build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/fuzz_common.sh
source tools/fuzz_common.sh

runs=${1:-4000}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: tools/fuzz.sh [RUNS]" >&2; exit 2; }
fuzz_require_toolchain
fuzz_build

work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-fuzz.XXXXXX")
# The harness writes each input to a file and error messages name it: a fixed folder keeps those
# texts, and so the code paths that build them, the same on every run. One gating run at a time.
export TRAINSIM_FUZZ_WORKDIR=/tmp/trainsim-fuzz-gate
exec 9>"$TRAINSIM_FUZZ_WORKDIR.lock"
flock 9
trap 'rm -rf "$work" "$TRAINSIM_FUZZ_WORKDIR"' EXIT
# Without address-space randomisation: containers keyed by pointers (yaml-cpp's, the allocator's)
# otherwise take other paths from run to run, and libFuzzer keeps other inputs.
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  norandom=(setarch "$(uname -m)" -R)
else
  echo "fuzz: warning: cannot turn off address-space randomisation (setarch -R); runs may differ" >&2
fi
failed=0
for t in "${fuzz_targets[@]}"; do
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  fuzz_seed_files "$t" >"$work/$t/seeds.txt"
  echo "fuzz: fuzz_$t: $runs runs from $(wc -l <"$work/$t/seeds.txt") checked-in inputs" >&2
  rc=0
  # -timeout and -rss_limit_mb are far above what any input needs (an input takes well under a
  # second), so a slower machine finds the same hangs and blow-ups and nothing else.
  rm -rf "$TRAINSIM_FUZZ_WORKDIR"
  "${norandom[@]+"${norandom[@]}"}" "build-fuzz/tests/fuzz/fuzz_$t" -seed=20261203 -runs="$runs" -timeout=25 -rss_limit_mb=2048 \
    -dict=tests/fuzz/trainsim.dict -artifact_prefix="$work/$t/artifacts/" -print_final_stats=1 \
    -seed_inputs="$(paste -sd, "$work/$t/seeds.txt")" "$work/$t/corpus" >"$work/$t.log" 2>&1 || rc=$?
  found=()
  for a in "$work/$t/artifacts"/*; do
    [ -f "$a" ] && found+=("$a")
  done
  if [ "$rc" -ne 0 ] || [ ${#found[@]} -ne 0 ]; then
    mkdir -p "build-fuzz/findings/$t"
    for a in "${found[@]+"${found[@]}"}"; do
      cp "$a" "build-fuzz/findings/$t/"
      echo "fuzz: fuzz_$t: finding kept as build-fuzz/findings/$t/$(basename "$a");" \
        "reproduce: build-fuzz/tests/fuzz/fuzz_$t build-fuzz/findings/$t/$(basename "$a")" >&2
    done
    echo "fuzz: fuzz_$t FAILED (exit $rc); log tail:" >&2
    tail -n 60 "$work/$t.log" >&2
    failed=1
  else
    grep -E "DONE|stat::number_of_executed_units|stat::new_units_added" "$work/$t.log" | tr -s " \n" " " >&2
    echo >&2
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: findings above" >&2
  exit 1
fi
echo "fuzz: no findings in $runs runs per target" >&2

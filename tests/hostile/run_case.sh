#!/usr/bin/env bash
# run_case.sh TRAINSIM CASE -- plays one hostile-input case (tests/hostile/cases/*.sh).
# A case is a bash fragment run in an empty scratch folder with these helpers:
#   file NAME <<'EOF' ... EOF    writes a file there (folders are created)
#   expect EXIT [PATTERN...]     the exit code and grep -E patterns its output must match
#   trainsim ARGS...             runs the binary (30 s limit, no stdin), output kept
#   sanitized                    true when TRAINSIM is an AddressSanitizer build
#   skip REASON                  ends the case as skipped (exit 77; ctest reports it so)
#   tiny_scenario                writes tiny.yaml: GPT-2 cut to two layers on a V100, fp16
#   tiny_sweep VALUES            tiny.yaml plus sweep.yaml sweeping training.micro_batch over
#                                VALUES (a YAML list or {range: ..., step: ...})
#   training_scenario MODEL LINE... [-- LINE...]
#                                writes s.yaml: MODEL on an A100-80GB, micro_batch 1 and
#                                seq_len 128 (lines 5-6), then each LINE as a training key
#                                (from line 7), and the lines after -- at the top level
# $REPO is the source tree, for cases that start from a shipped scenario.
# Whatever the case expects, a run fails when trainsim exits 1 (internal error), dies of a
# signal, hangs past the limit, or was never run; expecting exit 1 is refused.
set -u
TS=$1
case_file=$2
REPO=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-hostile.XXXXXX")
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1

file() { mkdir -p "$(dirname "$1")" && cat >"$1"; }
expect_exit=""
patterns=()
expect() { expect_exit=$1; shift; patterns=("$@"); }
sanitized() { grep -q __asan_init "$TS"; }
skip() { echo "skipped: $*"; exit 77; }
tiny_scenario() {
  file tiny.yaml <<'YAML'
name: tiny
model: {preset: gpt2, layers: 2}
device: v100-16gb
training: {micro_batch: 1, gradient_accumulation: 1, seq_len: 128, precision: fp16}
YAML
}
training_scenario() {
  printf 'name: t\nmodel: %s\ndevice: a100-80gb\ntraining:\n  micro_batch: 1\n  seq_len: 128\n' "$1" > s.yaml
  shift
  local indent='  '
  for line in "$@"; do
    if [ "$line" = -- ]; then indent=''; continue; fi
    printf '%s%s\n' "$indent" "$line" >> s.yaml
  done
}
tiny_sweep() {
  tiny_scenario
  printf 'base: {file: tiny.yaml}\naxes:\n  training.micro_batch: %s\n' "$1" > sweep.yaml
}
ran=0
output=""
code=0
trainsim() {
  ran=1
  output=$(timeout 30 "$TS" "$@" 2>&1 </dev/null)
  code=$?
}

# shellcheck disable=SC1090
source "$case_file"

fail() { echo "FAIL ($(basename "$case_file")): $*" >&2; status=1; }
status=0
[ "$ran" -eq 1 ] || fail "the case never ran trainsim"
[ -n "$expect_exit" ] || fail "the case sets no expected exit code"
[ "$expect_exit" != 1 ] || fail "a case may not expect exit 1 (internal error)"
if [ "$code" -eq 124 ]; then fail "hang: no answer within 30 s"
elif [ "$code" -ge 128 ]; then fail "killed by signal $((code - 128))"
elif [ "$code" -eq 1 ]; then fail "internal error (exit 1)"
fi
[ "$code" = "$expect_exit" ] || fail "exit $code, expected $expect_exit"
for p in "${patterns[@]+"${patterns[@]}"}"; do
  printf '%s\n' "$output" | grep -Eq -- "$p" || fail "output does not match /$p/"
done
if [ "$status" -ne 0 ]; then
  echo "--- output ---" >&2
  printf '%s\n' "$output" | head -c 4000 >&2
fi
exit $status

#!/usr/bin/env bash
# tools/sanitize.sh -- builds the `asan` preset (AddressSanitizer + UndefinedBehaviorSanitizer,
# build-asan/) and runs the whole ctest suite under it, except the libFuzzer smoke run (label
# `fuzz`, which builds its own sanitized binaries). Leaks fail the run; the first UB report
# stops the process with a stack trace. Extra arguments go to ctest (e.g. -R test_exec).
# JOBS (default 2) sets build and test parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

cmake --preset asan >/dev/null
cmake --build --preset asan --parallel "${JOBS:-2}"
ctest --preset asan --label-exclude fuzz --parallel "${JOBS:-2}" "$@"

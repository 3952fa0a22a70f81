# Sourced by tools/fuzz.sh (the deterministic gating run) and tools/fuzz_hunt.sh (open-ended
# hunting): the targets, the toolchain check, the fuzz build and each target's seed inputs.

fuzz_targets=(scenario model hf_config overrides units sweep csv import)

# fuzz_require_toolchain: returns 0 when clang++ and the libFuzzer runtime are there; else
# prints what is missing and exits 77 (ctest: skipped) under TRAINSIM_SKIP_FUZZ=1, 1 otherwise.
fuzz_require_toolchain() {
  local missing="" rt
  if ! command -v clang++ >/dev/null 2>&1; then
    missing="clang++ (apt-get install clang-14)"
  else
    rt="$(clang++ -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a"
    [ -f "$rt" ] || missing="libFuzzer runtime $rt (apt-get install libclang-rt-14-dev)"
  fi
  [ -z "$missing" ] && return 0
  if [ "${TRAINSIM_SKIP_FUZZ:-0}" = 1 ]; then
    echo "fuzz: skipped (TRAINSIM_SKIP_FUZZ=1): missing $missing" >&2
    exit 77
  fi
  echo "fuzz: cannot fuzz: missing $missing. Install it, or set TRAINSIM_SKIP_FUZZ=1 to skip." >&2
  exit 1
}

# fuzz_build: configures and builds the `fuzz` preset's targets in build-fuzz/.
fuzz_build() {
  echo "fuzz: building the fuzz preset in build-fuzz/" >&2
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz --parallel "${JOBS:-2}" --target "${fuzz_targets[@]/#/fuzz_}" >/dev/null
}

# fuzz_seed_files TARGET: the checked-in inputs of a target, one path a line, sorted (C locale)
# so every machine hands libFuzzer the same inputs in the same order: the shipped files the
# target reads, tests/fuzz/seeds/TARGET/ and every saved finding in tests/fuzz/regressions/TARGET/.
fuzz_seed_files() {
  local t=$1
  {
    case $t in
      scenario) find scenarios tests/cli/data -name '*.yaml' -type f ;;
      model) find models -name '*.yaml' -type f ;;
      hf_config) find models/hf -name '*.json' -type f ;;
      import) find tests/data/import -type f ;;
      sweep) find scenarios/sweeps bench/sweeps -name '*.yaml' -type f ;;
    esac
    for d in "tests/fuzz/seeds/$t" "tests/fuzz/regressions/$t"; do
      if [ -d "$d" ]; then find "$d" -type f ! -name README.md; fi
    done
  } | LC_ALL=C sort
}

#!/usr/bin/env bash
# Installs what trainsim needs from Debian 12 packages, if missing. Idempotent and quiet when
# everything is already there. Needs root (or sudo) only when something must be installed.
#   bash tools/setup.sh          build and run trainsim
#   bash tools/setup.sh --test   also what the test suite needs: clang and libFuzzer (fuzzing),
#                                GNU parallel (sharded sweeps), Chromium (HTML report render),
#                                pytest and pandas (the Python module's tests)
set -euo pipefail

packages=(
  build-essential cmake ninja-build
  libboost-graph-dev libboost-program-options-dev libyaml-cpp-dev libeigen3-dev catch2
  libtomlplusplus-dev
  libbenchmark-dev
  pybind11-dev python3-dev
)
if [ "${1:-}" = "--test" ]; then
  packages+=(clang libclang-rt-14-dev parallel chromium python3 python3-pytest python3-pandas)
elif [ -n "${1:-}" ]; then
  echo "usage: bash tools/setup.sh [--test]" >&2
  exit 2
fi
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "trainsim setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

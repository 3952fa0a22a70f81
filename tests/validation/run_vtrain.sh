#!/usr/bin/env bash
# Compares trainsim's step times with the vTrain measured runs when ../shared/validation is
# there (it is never copied into this repository); skipped (exit 77) otherwise.
# usage: run_vtrain.sh TRAINSIM
set -u
data="$(cd "$(dirname "$0")/../.." && pwd)/../shared/validation/vtrain/ground_truth_multi.csv"
if [ ! -f "$data" ]; then
  echo "vTrain data not found at $data: skipped"
  exit 77
fi
"$1" compare "$data" --ratchet tests/validation/ratchet.txt | tail -16
exit "${PIPESTATUS[0]}"

#!/usr/bin/env bash
# Compares trainsim's step times with the vTrain measured runs when ../shared/validation is
# there (it is never copied into this repository); skipped (exit 77) otherwise.
# usage: run_vtrain.sh TRAINSIM [TABLE RATCHET]
#   TABLE: the file name under ../shared/validation/vtrain/ (default ground_truth_multi.csv)
#   RATCHET: the ratchet file, relative to the source root (default tests/validation/ratchet.txt)
set -u
table="${2:-ground_truth_multi.csv}"
ratchet="${3:-tests/validation/ratchet.txt}"
data="$(cd "$(dirname "$0")/../.." && pwd)/../shared/validation/vtrain/$table"
if [ ! -f "$data" ]; then
  echo "vTrain data not found at $data: skipped"
  exit 77
fi
"$1" compare "$data" --quiet --ratchet "$ratchet" | awk '/^subset/ {s = 1} s'
exit "${PIPESTATUS[0]}"

#!/usr/bin/env bash
# Compares trainsim's peak memory with published measurements (tests/validation/memory_cases.yaml,
# the scenarios in scenarios/validation/memory/) when ../shared/validation is there (it is never
# copied into this repository); skipped (exit 77) otherwise. Prints the table and holds
# tests/validation/memory_ratchet.txt.
# usage: run_memory.sh TRAINSIM
set -u
data="$(cd "$(dirname "$0")/../.." && pwd)/../shared/validation/measured_memory_public.yaml"
if [ ! -f "$data" ]; then
  echo "measured memory data not found at $data: skipped"
  exit 77
fi
"$1" compare-memory tests/validation/memory_cases.yaml --measured "$data" \
  --ratchet tests/validation/memory_ratchet.txt

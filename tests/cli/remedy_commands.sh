#!/usr/bin/env bash
# Every remedy `diagnose` prints is a command that runs as printed: each line starting with
# `trainsim run` is executed by bash (with `trainsim` meaning the built binary) and must fit
# (exit 0). Usage: remedy_commands.sh TRAINSIM SCENARIO [--set k=v ...]
set -uo pipefail
ts=$1; shift
out=$("$ts" diagnose "$@") || [ $? -eq 3 ] || { echo "diagnose failed"; exit 1; }
mapfile -t commands < <(printf '%s\n' "$out" | sed -n 's/^ *\(trainsim run .*\)$/\1/p')
if [ ${#commands[@]} -eq 0 ]; then
  echo "no remedy command printed:"; printf '%s\n' "$out"; exit 1
fi
status=0
for c in "${commands[@]}"; do
  TRAINSIM_BIN=$ts bash -c 'trainsim() { "$TRAINSIM_BIN" "$@"; }; '"$c"' --no-diagnosis > /dev/null'
  rc=$?
  echo "exit $rc: $c"
  [ $rc -eq 0 ] || status=1
done
exit $status

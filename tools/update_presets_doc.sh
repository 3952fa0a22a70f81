#!/usr/bin/env bash
# Writes the preset tables of docs/presets.md from the program (`trainsim models --markdown`,
# `trainsim devices --markdown`), between the BEGIN/END markers of each table.
#   bash tools/update_presets_doc.sh [TRAINSIM]          rewrite docs/presets.md
#   bash tools/update_presets_doc.sh --check [TRAINSIM]  exit 1 when it differs (a ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
trainsim=${1:-build/tools/trainsim}
doc=docs/presets.md
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp".*' EXIT
"$trainsim" models --markdown > "$tmp.models"
"$trainsim" devices --markdown > "$tmp.devices"
# Keep every line outside the markers; replace what is between them with the listing named
# in the BEGIN marker.
awk -v models="$tmp.models" -v devices="$tmp.devices" '
  /^<!-- BEGIN generated: trainsim models --markdown -->$/ { print; while ((getline l < models) > 0) print l; skip = 1; next }
  /^<!-- BEGIN generated: trainsim devices --markdown -->$/ { print; while ((getline l < devices) > 0) print l; skip = 1; next }
  /^<!-- END generated -->$/ { skip = 0 }
  !skip { print }
' "$doc" > "$tmp"
if [ $check -eq 1 ]; then
  if ! diff -u "$doc" "$tmp"; then
    echo "docs/presets.md is stale: regenerate it with 'bash tools/update_presets_doc.sh' and commit it" >&2
    exit 1
  fi
  exit 0
fi
cp "$tmp" "$doc"
echo "updated $doc"

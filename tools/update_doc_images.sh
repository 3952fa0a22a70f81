#!/usr/bin/env bash
# Regenerates every picture in docs/img from the program: the HTML report of a scenario, rendered
# by headless Chromium. Next to each picture NAME.png it writes NAME.source.json, the JSON report
# of the same run (the figures the picture shows). PNG bytes from Chromium differ between machines
# (fonts, versions), so staleness is judged on the figures: `--check` re-runs the scenarios (no
# browser), compares the reports with the committed NAME.source.json files and fails, naming this
# script, when one differs, when a listed picture is missing or when docs/img holds a picture not
# listed here. The ctest docs:images_fresh runs the check.
#
# usage: tools/update_doc_images.sh [--check] [TRAINSIM]   (TRAINSIM: build/tools/trainsim)
# Chromium: $CHROMIUM or /usr/bin/chromium (tools/setup.sh --test installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=update
if [[ ${1:-} == --check ]]; then
  mode=check
  shift
fi
trainsim=${1:-build/tools/trainsim}
img=docs/img

# NAME SCENARIO: each picture and the scenario whose report it shows.
pictures=(
  "report-activation-oom scenarios/single_gpu/02_activation_oom.yaml"
  "report-pipeline-fits scenarios/parallel/04_pipeline_fits.yaml"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The JSON report of SCENARIO into FILE (exit 0 fits or 3 out of memory are both pictures).
report_json() {
  local rc=0
  "$trainsim" run "$1" --format json "${@:3}" >"$2" || rc=$?
  if [[ $rc != 0 && $rc != 3 ]]; then
    echo "update_doc_images.sh: trainsim run $1 exited $rc" >&2
    exit 1
  fi
}

if [[ $mode == check ]]; then
  stale=0
  listed=" "
  for p in "${pictures[@]}"; do
    read -r name scenario <<<"$p"
    listed+="$name.png "
    if [[ ! -f $img/$name.png || ! -f $img/$name.source.json ]]; then
      echo "MISSING: $img/$name.png or $img/$name.source.json" >&2
      stale=1
      continue
    fi
    report_json "$scenario" "$tmp/$name.json"
    if ! cmp -s "$tmp/$name.json" "$img/$name.source.json"; then
      echo "STALE: $img/$name.png shows figures the program no longer prints for $scenario:" >&2
      diff -u "$img/$name.source.json" "$tmp/$name.json" | head -n 40 >&2 || true
      stale=1
    fi
  done
  for f in "$img"/*.png; do
    [[ -e $f ]] || continue
    if [[ $listed != *" $(basename "$f") "* ]]; then
      echo "UNLISTED: $f is not made by tools/update_doc_images.sh (add it to its list or remove it)" >&2
      stale=1
    fi
  done
  if [[ $stale != 0 ]]; then
    echo "docs/img is stale: regenerate it with 'bash tools/update_doc_images.sh' (needs Chromium:" \
         "tools/setup.sh --test) and commit the pictures with their .source.json files" >&2
    exit 1
  fi
  echo "ok: ${#pictures[@]} pictures in $img match the program's reports"
  exit 0
fi

chromium=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $chromium ]]; then
  echo "update_doc_images.sh: headless Chromium not found at $chromium: run tools/setup.sh --test" \
       "or point CHROMIUM at it" >&2
  exit 1
fi
# As tests/report/browser_render.sh: offline, a fresh profile, no scrollbars.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --disable-dev-shm-usage --disable-extensions
       --host-resolver-rules="MAP * ~NOTFOUND" --hide-scrollbars --window-size=1140,1300)
for p in "${pictures[@]}"; do
  read -r name scenario <<<"$p"
  report_json "$scenario" "$tmp/$name.json" --html "$tmp/$name.html"
  timeout 90 "$chromium" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$tmp")" \
    --screenshot="$tmp/$name.png" "file://$tmp/$name.html" >/dev/null 2>"$tmp/$name.log" || {
    echo "update_doc_images.sh: chromium failed on $name:" >&2
    tail -n 20 "$tmp/$name.log" >&2
    exit 1
  }
  [[ -s $tmp/$name.png ]] || { echo "update_doc_images.sh: empty screenshot for $name" >&2; exit 1; }
  cp "$tmp/$name.png" "$img/$name.png"
  cp "$tmp/$name.json" "$img/$name.source.json"
  echo "wrote $img/$name.png and $img/$name.source.json ($scenario)"
done

#!/usr/bin/env bash
# Renders `trainsim run --html` in headless Chromium and checks what a browser sees: the verdict,
# the inline SVG plot, and no console errors or blocked network loads (the report must be
# self-contained; every host name resolves to nothing here).
#
# usage: browser_render.sh TRAINSIM SCENARIO VERDICT [SCREENSHOT.png]
# Chromium: $CHROMIUM or /usr/bin/chromium. Missing Chromium fails the test unless
# TRAINSIM_SKIP_BROWSER=1, which skips it (exit 77).
set -u
trainsim=$1 scenario=$2 verdict=$3 shot=${4:-}
chromium=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $chromium ]]; then
  if [[ ${TRAINSIM_SKIP_BROWSER:-0} == 1 ]]; then
    echo "SKIP: $chromium not found and TRAINSIM_SKIP_BROWSER=1"
    exit 77
  fi
  echo "FAIL: headless Chromium not found at $chromium: install it (apt-get install -y chromium)," \
       "point CHROMIUM at it, or set TRAINSIM_SKIP_BROWSER=1 to skip this test" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$trainsim" run "$scenario" --html "$tmp/report.html" >/dev/null
rc=$?
if [[ $rc != 0 && $rc != 3 ]]; then
  echo "FAIL: trainsim exited $rc" >&2
  exit 1
fi
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --disable-dev-shm-usage --disable-extensions
       --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0)
run_chromium() {  # a fresh profile each time
  timeout 90 "$chromium" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$tmp")" "$@"
}
run_chromium --dump-dom "file://$tmp/report.html" >"$tmp/dom.html" 2>"$tmp/log.txt"
rc=$?
fail() {
  echo "FAIL: $*" >&2
  echo "--- chromium log:" >&2
  tail -n 40 "$tmp/log.txt" >&2
  exit 1
}
[[ $rc == 0 ]] || fail "chromium --dump-dom exited $rc"
grep -q "<h1>$verdict</h1>" "$tmp/dom.html" || fail "the rendered DOM has no <h1>$verdict</h1>"
grep -q "<svg" "$tmp/dom.html" || fail "the rendered DOM has no inline <svg>"
grep -q 'class="panel"' "$tmp/dom.html" || fail "the memory plot has no panel"
grep -q 'class="capacity"' "$tmp/dom.html" || fail "the memory plot has no capacity line"
if grep -E "Uncaught|:CONSOLE|net::ERR_|Failed to load" "$tmp/log.txt" >&2; then
  fail "console errors or network loads while rendering"
fi
if [[ -n $shot ]]; then
  run_chromium --hide-scrollbars --window-size=1140,1300 --screenshot="$shot" "file://$tmp/report.html" \
    >/dev/null 2>>"$tmp/log.txt" || fail "chromium --screenshot failed"
  [[ -s $shot ]] || fail "empty screenshot"
fi
echo "ok: $scenario renders with verdict '$verdict'"

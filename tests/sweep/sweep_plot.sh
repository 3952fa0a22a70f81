#!/usr/bin/env bash
# sweep_plot.sh TRAINSIM — `trainsim sweep --plot`: a shipped sweep's fit/OOM map is well-formed
# XML (python3 xml.etree) with one cell per (x, y) value pair, identical for every -j, and the
# same after an interrupted run is resumed. Run from the repository root.
set -euo pipefail
ts=$1
sweep=scenarios/sweeps/data_vs_pipeline_batch_limit.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ts" sweep $sweep --csv $work/a.csv --plot $work/a.svg -j 2 > /dev/null
python3 - "$work/a.svg" <<'PY' || fail "the map is not the expected SVG"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
cells = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class", "").startswith("cell ")]
assert len(cells) == 3 * 3, len(cells)  # parallel.pipeline x parallel.data (the first two axes)
kinds = {c.get("class") for c in cells}
assert "cell fits" in kinds, kinds
texts = "".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert "data_vs_pipeline_batch_limit.yaml" in texts
assert "parallel.pipeline" in texts and "parallel.data" in texts
assert "share a cell" in texts  # micro_batch varies within each cell
PY

# Other axes: micro-batch x pipeline has fit and OOM cells, hence a boundary.
"$ts" sweep $sweep --plot $work/b.svg --plot-axes training.micro_batch,parallel.pipeline -j 2 > /dev/null
python3 - "$work/b.svg" <<'PY' || fail "the --plot-axes map"
import sys, xml.etree.ElementTree as ET
S = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
cells = [r.get("class") for r in root.iter(S + "rect") if r.get("class", "").startswith("cell ")]
assert len(cells) == 6 * 3, len(cells)
assert "cell fits" in cells and any(c.startswith("cell oom") for c in cells), cells
assert any(p.get("class") == "boundary" for p in root.iter(S + "path")), "no boundary path"
PY

# Deterministic across -j, and a resumed run maps every point, kept and new.
"$ts" sweep $sweep --plot $work/j1.svg --plot-axes training.micro_batch,parallel.pipeline -j 1 > /dev/null
cmp $work/b.svg $work/j1.svg || fail "the map depends on -j"
# (OOM causes of the kept points come from the CSV, or from the JSON Lines file.)
axes=(--plot-axes training.micro_batch,parallel.pipeline)
for kind in csv jsonl; do
  set +e
  "$ts" sweep $sweep --$kind $work/r.$kind --plot $work/r.svg "${axes[@]}" -j 2 --stop-after 25 > /dev/null 2>&1
  rc=$?
  set -e
  [ $rc -eq 130 ] || fail "an interrupted sweep exits 130, got $rc"
  grep -q '25 of 54 points have results' $work/r.svg || fail "a partial map says how many points it holds"
  "$ts" sweep $sweep --$kind $work/r.$kind --plot $work/r.svg "${axes[@]}" -j 2 --resume > /dev/null
  cmp $work/b.svg $work/r.svg || fail "the map after --resume ($kind) differs from an uninterrupted run's"
done

# Bad axes are usage errors (exit 2).
set +e
out=$("$ts" sweep $sweep --plot $work/c.svg --plot-axes training.micro_batch,nope 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$out" | grep -q "'nope' is not an axis" || fail "$rc $out"
echo "ok: plot"

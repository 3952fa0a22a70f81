#!/usr/bin/env python3
"""End-to-end checks of `trainsim run --trace/--plot/--html` on one scenario.

usage: check_visuals.py TRAINSIM SCENARIO [trainsim options...]

Runs trainsim from the repo root into a temporary folder and checks that
  - the trace is valid JSON with the trace-event fields Perfetto needs, every complete event
    has ts >= 0 and dur >= 0, slices on one thread nest, and the memory counters' largest
    total equals each stage's reported peak (and the overall peak);
  - the SVG is well-formed XML with one panel per stage, a capacity line per panel and the
    OOM marks the report lists;
  - the HTML is well-formed enough for an XML parser once the doctype is removed, has every
    section and the verdict, and escapes the scenario name.
"""
import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_trace(path, report):
    trace = json.loads(Path(path).read_text())
    events = trace.get("traceEvents")
    if not isinstance(events, list) or not events:
        fail("trace has no traceEvents list")
    for e in events:
        for key in ("name", "ph", "pid"):
            if key not in e:
                fail(f"trace event without '{key}': {e}")
        if e["ph"] in ("X", "C", "i") and not isinstance(e.get("ts"), (int, float)):
            fail(f"event without a numeric ts: {e}")
    slices = [e for e in events if e["ph"] == "X"]
    if not slices:
        fail("no complete (X) events")
    per_thread = {}
    for e in slices:
        if e["ts"] < 0 or e["dur"] < 0:
            fail(f"negative ts or dur: {e}")
        per_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for key, spans in per_thread.items():
        spans.sort()
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            if b0 < a1 - 1e-6 and b1 > a1 + 1e-6:
                fail(f"overlapping, non-nested slices on pid/tid {key}: {(a0, a1)} {(b0, b1)}")
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    if len(names) != len(report["devices"]):
        fail(f"{len(names)} processes for {len(report['devices'])} stages")
    peak = {}
    for e in events:
        if e["ph"] == "C" and e["name"] == "memory":
            peak[e["pid"]] = max(peak.get(e["pid"], 0), sum(e["args"].values()))
    for i, d in enumerate(report["devices"]):
        if not names[i + 1].startswith(f"stage {d['stage']} (x "):
            fail(f"process {i + 1} named {names[i + 1]!r}")
        if peak.get(i + 1) != d["peak_bytes"]:
            fail(f"stage {i}: counter peak {peak.get(i + 1)} != reported peak {d['peak_bytes']}")
    if max(peak.values()) != report["peak_bytes"]:
        fail("counters' largest total differs from the reported peak")
    instants = [e for e in events if e["ph"] == "i"]
    if len(instants) != len(report["oom"]):
        fail(f"{len(instants)} OOM instants for {len(report.get('oom_points', []))} OOM points")
    for e in instants:
        if e.get("s") != "p":
            fail(f"OOM instant not process-scoped: {e}")


def check_svg(path, report):
    root = ET.parse(path).getroot()
    if root.tag != SVG + "svg":
        fail(f"SVG root is {root.tag}")
    panels = [g for g in root.iter(SVG + "g") if g.get("class") == "panel"]
    if len(panels) != min(len(report["devices"]), 16) and len(report["devices"]) <= 16:
        fail(f"{len(panels)} panels for {len(report['devices'])} stages")
    for g in panels:
        caps = [l for l in g.iter(SVG + "line") if l.get("class") == "capacity"]
        if len(caps) != 1 or "stroke-dasharray" not in caps[0].attrib:
            fail("a panel without its dashed capacity line")
    marks = [g for g in root.iter(SVG + "g") if g.get("class") == "oom"]
    if bool(marks) != bool(report["oom"]):
        fail(f"{len(marks)} OOM marks but {len(report.get('oom_points', []))} OOM points")


def check_html(path, report, name):
    text = Path(path).read_text()
    for banned in ("<script", "http://", "https://", "@import", "url("):
        body = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        if banned in body:
            fail(f"HTML is not self-contained: it contains {banned!r}")
    root = ET.fromstring(text.split("\n", 1)[1])  # drop <!DOCTYPE html>
    ids = {e.get("id") for e in root.iter() if e.get("id")}
    for section in ("verdict", "summary", "stages", "ooms", "comm", "memory-plot"):
        if section not in ids:
            fail(f"HTML has no #{section}")
    if report.get("diagnosis") and "diagnosis" not in ids:
        fail("HTML has no #diagnosis although the report has one")
    verdict = "FITS" if report["fits"] else "OUT OF MEMORY"
    h1 = next(root.iter("h1"))
    if h1.text != verdict:
        fail(f"HTML verdict {h1.text!r}, expected {verdict!r}")
    title = next(root.iter("title")).text
    if title != "trainsim: " + name:
        fail(f"HTML title {title!r} does not carry the scenario name {name!r} (escaping?)")
    if not list(root.iter(SVG + "svg")):
        fail("HTML has no inline SVG")


def main():
    trainsim, scenario, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        cmd = [trainsim, "run", scenario, *extra, "--format", "json", "-o", str(t / "r.json"),
               "--trace", str(t / "t.json"), "--plot", str(t / "p.svg"), "--html", str(t / "r.html")]
        rc = subprocess.run(cmd).returncode
        if rc not in (0, 3):
            fail(f"{' '.join(cmd)} exited {rc}")
        report = json.loads((t / "r.json").read_text())
        if (rc == 0) != report["fits"]:
            fail("exit code and verdict disagree")
        check_trace(t / "t.json", report)
        check_svg(t / "p.svg", report)
        check_html(t / "r.html", report, report["name"])
    print("ok")


if __name__ == "__main__":
    main()

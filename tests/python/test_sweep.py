# trainsim.sweep yields the `trainsim sweep --jsonl` records in point order as they finish;
# sweep_frame holds the `--csv` rows.
import io
import json
import sys

import pytest

import trainsim

SWEEP = "scenarios/sweeps/ddp_bucket_buffers.yaml"
POINTS = 3 * 8  # bucket_buffers: 3 values x micro_batch 1..8


def test_sweep_yields_the_jsonl_records(cli, tmp_path):
    jsonl = tmp_path / "points.jsonl"
    code, _ = cli("sweep", SWEEP, "--jsonl", str(jsonl), "-j", "2")
    assert code == 0
    expected = [json.loads(line) for line in jsonl.read_text().splitlines()]
    got = list(trainsim.sweep(SWEEP, jobs=2))
    assert len(got) == POINTS
    assert [r["point"] for r in got] == list(range(POINTS))
    assert got == expected


def test_sweep_is_a_generator_that_can_stop_early():
    points = trainsim.sweep(SWEEP, jobs=2)
    first = next(points)
    assert first["point"] == 0
    assert first["set"] == {"parallel.bucket_buffers": "transient", "training.micro_batch": 1}
    points.close()  # stops the workers; must not hang
    for record in trainsim.sweep(SWEEP, jobs=1):
        if record["point"] == 2:
            break


def test_sweep_from_a_dict():
    spec = {
        "base": {"file": "scenarios/quickstart.yaml"},
        "axes": {"training.micro_batch": [4, 64]},
    }
    got = list(trainsim.sweep(spec))
    assert [r["status"] for r in got] == ["fits", "oom"]
    assert got[0]["report"] == trainsim.run("scenarios/quickstart.yaml", {"training.micro_batch": 4})


def test_sweep_axis_typo_is_located():
    spec = "base: {file: scenarios/quickstart.yaml}\naxes:\n  training.micro_bach: [1, 2]\n"
    with pytest.raises(trainsim.ScenarioError) as e:
        next(trainsim.sweep(spec))
    assert (e.value.file, e.value.line) == ("<string>", 3)
    assert e.value.key_path == "axes.training.micro_bach"


def test_sweep_frame_is_the_csv(cli, tmp_path):
    pandas = pytest.importorskip("pandas")
    csv = tmp_path / "points.csv"
    cli("sweep", SWEEP, "--csv", str(csv))
    expected = pandas.read_csv(csv, keep_default_na=False, na_values=[""])
    frame = trainsim.sweep_frame(SWEEP)
    assert list(frame.columns) == list(expected.columns)
    assert len(frame) == POINTS
    pandas.testing.assert_frame_equal(frame, expected)


def test_sweep_frame_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(ImportError, match="python3-pandas"):
        trainsim.sweep_frame(SWEEP)

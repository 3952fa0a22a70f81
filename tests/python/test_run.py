# trainsim.run / report / diagnose / fit / plan return what `--format json` prints.
import json
import pathlib
import threading
import time

import trainsim

QUICKSTART = "scenarios/quickstart.yaml"
ACTIVATION_OOM = "scenarios/single_gpu/02_activation_oom.yaml"

# scenarios/quickstart.yaml as a dict (its keys, written by hand).
QUICKSTART_DICT = {
    "name": "gpt2 on one V100",
    "model": "gpt2",
    "device": "v100-16gb",
    "training": {"micro_batch": 8, "gradient_accumulation": 1, "seq_len": 1024,
                 "precision": "fp16", "optimizer": "adamw", "recompute": "none"},
    "parallel": {"data": 1, "tensor": 1, "pipeline": 1},
}


def test_run_is_the_json_report(cli_json):
    code, expected = cli_json("run", QUICKSTART)
    assert code == 0
    got = trainsim.run(QUICKSTART)
    assert got == expected
    assert got["fits"] is True


def test_path_yaml_text_and_dict_give_the_same_report():
    from_path = trainsim.run(pathlib.Path(QUICKSTART))
    from_text = trainsim.run(pathlib.Path(QUICKSTART).read_text())
    from_dict = trainsim.run(QUICKSTART_DICT)
    assert from_text == from_path
    assert from_dict == from_path


def test_overrides_are_set_arguments(cli_json):
    _, expected = cli_json("run", QUICKSTART, "--set", "training.micro_batch=4",
                           "--set", "training.recompute=full")
    got = trainsim.run(QUICKSTART, {"training.micro_batch": 4, "training.recompute": "full"})
    assert got == expected
    assert got != trainsim.run(QUICKSTART)


def test_out_of_memory_carries_the_diagnosis(cli_json):
    code, expected = cli_json("run", ACTIVATION_OOM)
    assert code == 3
    got = trainsim.run(ACTIVATION_OOM)
    assert got == expected
    assert got["fits"] is False
    assert got["diagnosis"]["remedies"], "remedies that fit were re-simulated"
    assert "diagnosis" not in trainsim.run(ACTIVATION_OOM, diagnosis=False)


def test_diagnose_of_text_is_the_diagnose_command(cli_json):
    # The remedies of a scenario held in memory are loaded from that text too.
    _, expected = cli_json("diagnose", ACTIVATION_OOM)
    assert trainsim.diagnose(ACTIVATION_OOM) == expected
    # Text has no file to name, so only each remedy's command line differs: the same --set list.
    from_text = trainsim.diagnose(pathlib.Path(ACTIVATION_OOM).read_text())
    for got, want in zip(from_text["diagnosis"]["remedies"], expected["diagnosis"]["remedies"]):
        assert got.pop("command").split(" --set ")[1:] == want.pop("command").split(" --set ")[1:]
    assert from_text == expected


def test_report_object_shows_html_in_jupyter():
    r = trainsim.report(ACTIVATION_OOM, {"training.micro_batch": 2})
    assert r.data == trainsim.run(ACTIVATION_OOM, {"training.micro_batch": 2})
    assert r["name"] == "gpt2-large with a micro-batch too large"
    html = r._repr_html_()
    assert html.startswith("<!DOCTYPE html>")
    assert "<svg" in html and "gpt2-large with a micro-batch too large" in html
    assert r.text.startswith("FITS" if r.fits else "OUT OF MEMORY")
    assert repr(r) == r.text


def test_fit_is_the_fit_command(cli_json):
    _, expected = cli_json("fit", QUICKSTART, "--find", "training.micro_batch")
    got = trainsim.fit(QUICKSTART, "training.micro_batch")
    assert got == expected
    # The largest micro-batch that fits, one more does not (fit's exponential then binary search).
    assert got["peak_bytes"] <= got["capacity_bytes"] < got["next_peak_bytes"]
    assert got["next_value"] == got["value"] + 1


def test_plan_is_the_plan_command(cli_json):
    _, expected = cli_json("plan", QUICKSTART, "--gpus", "4", "--top", "3", "-j", "1")
    got = trainsim.plan(QUICKSTART, 4, top=3, jobs=1)
    assert got == expected
    assert [c["rank"] for c in got] == [1, 2, 3]


def test_nothing_is_printed(capfd):
    trainsim.run(ACTIVATION_OOM)
    trainsim.plan(QUICKSTART, 8, top=1, jobs=1000)  # the command line notes the lowered -j
    list(trainsim.sweep("scenarios/sweeps/ddp_bucket_buffers.yaml", jobs=1000))
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_the_simulation_releases_the_gil():
    # While another thread is inside trainsim.run, this thread keeps running Python: with the
    # GIL held through the simulation it could not take a single step until run returned.
    window = {}

    def simulate():
        window["start"] = time.monotonic()
        for _ in range(3):
            trainsim.run(ACTIVATION_OOM)  # the diagnosis re-simulates dozens of remedies
        window["end"] = time.monotonic()

    t = threading.Thread(target=simulate)
    stamps = []
    t.start()
    while t.is_alive():
        stamps.append(time.monotonic())
        time.sleep(0.001)
    t.join()
    start, end = window["start"], window["end"]
    quarter = (end - start) / 4
    inside = [s for s in stamps if start + quarter < s < end - quarter]
    assert len(inside) >= 2, f"no Python ran during the middle half of a {end - start:.3f} s simulation"

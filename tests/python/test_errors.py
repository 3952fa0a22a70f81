# Bad input raises trainsim.ScenarioError located like the command line's message; other
# argument mistakes are ordinary Python errors.
import pytest

import trainsim

BAD = """name: x
model: gpt2
device: v100-16gb
training:
  micro_batch: -3
  seq_len: 1024
"""


def test_error_classes():
    assert issubclass(trainsim.ScenarioError, ValueError)
    assert issubclass(trainsim.ResourceError, MemoryError)
    assert issubclass(trainsim.InternalError, RuntimeError)
    for cls in (trainsim.ScenarioError, trainsim.ResourceError, trainsim.InternalError):
        assert issubclass(cls, trainsim.Error)


def test_bad_value_in_text_is_located():
    with pytest.raises(trainsim.ScenarioError) as e:
        trainsim.run(BAD)
    # `micro_batch: -3` is line 5; its value starts at column 16.
    assert (e.value.file, e.value.line, e.value.column) == ("<string>", 5, 16)
    assert e.value.key_path == "training.micro_batch"
    assert e.value.message == str(e.value)
    assert e.value.message == "<string>:5:16: training.micro_batch: expected an integer in 1..1000000000, got -3"


def test_bad_value_in_a_file_matches_the_command_line(tmp_path, cli):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    code, _ = cli("run", str(path))
    assert code == 2
    with pytest.raises(trainsim.ScenarioError) as e:
        trainsim.run(str(path))
    assert (e.value.file, e.value.line, e.value.column) == (str(path), 5, 16)


def test_bad_override_names_the_override():
    with pytest.raises(trainsim.ScenarioError) as e:
        trainsim.run("scenarios/quickstart.yaml", {"training.micro_batch": 0})
    assert e.value.file == "--set training.micro_batch=0"
    assert e.value.key_path == "training.micro_batch"
    with pytest.raises(trainsim.ScenarioError) as e:
        trainsim.run("scenarios/quickstart.yaml", {"training.micro_bach": 4})
    assert "unknown key" in e.value.message


def test_bad_dict_names_the_key():
    with pytest.raises(trainsim.ScenarioError) as e:
        trainsim.run({"name": "x", "model": "gpt2", "device": "no-such-gpu", "training": {"micro_batch": 1}})
    assert e.value.file == "<dict>"
    assert e.value.key_path == "device"
    assert e.value.line is not None and e.value.column is not None


def test_missing_file():
    with pytest.raises(trainsim.ScenarioError) as e:
        trainsim.run("scenarios/no_such_scenario.yaml")
    assert e.value.file == "scenarios/no_such_scenario.yaml"
    assert e.value.line is None
    assert "does not exist" in e.value.message


def test_argument_mistakes():
    with pytest.raises(TypeError):
        trainsim.run(42)
    with pytest.raises(TypeError):
        trainsim.run("scenarios/quickstart.yaml", ["training.micro_batch=4"])
    with pytest.raises(ValueError, match="objective"):
        trainsim.plan("scenarios/quickstart.yaml", 4, objective="speed")
    with pytest.raises(ValueError, match="gpus"):
        trainsim.plan("scenarios/quickstart.yaml", 0)
    with pytest.raises(ValueError, match="start"):
        trainsim.fit("scenarios/quickstart.yaml", "training.micro_batch", start=0)

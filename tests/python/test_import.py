# trainsim.import_config: the scenario `trainsim import` writes, as text the other functions
# take; a config it cannot map raises ScenarioError located in the config.
import pytest

import trainsim


def test_imported_text_matches_the_command_line_and_runs(cli):
    text = trainsim.import_config("torchtune", "tests/data/import/torchtune_l32_3b_full_adamw8bit.yaml",
                                  gpus=1, device="a100-80gb", model="llama3-8b")
    code, out = cli("import", "torchtune", "tests/data/import/torchtune_l32_3b_full_adamw8bit.yaml",
                    "--gpus", "1", "--device", "a100-80gb", "--model", "llama3-8b")
    assert code == 0
    assert text == out
    report = trainsim.run(text, diagnosis=False)
    assert report["model"]["name"] == "llama3-8b"
    assert report["training"]["optimizer"] == "adamw-8bit"


def test_a_config_it_cannot_map_is_located(tmp_path):
    path = tmp_path / "ft.yaml"
    path.write_text("model:\n  _component_: torchtune.models.llama2.llama2_7b\n"
                    "batch_size: 2\ngradient_accumulation_steps: 1\ndtype: fp16\n")
    with pytest.raises(trainsim.ScenarioError) as e:
        trainsim.import_config("torchtune", path, seq_len=512)
    assert (e.value.line, e.value.column, e.value.key_path) == (5, 8, "dtype")


def test_an_unknown_kind_is_a_scenario_error():
    with pytest.raises(trainsim.ScenarioError) as e:
        trainsim.import_config("nemo", "x.yaml")
    assert "expected one of: megatron" in e.value.message

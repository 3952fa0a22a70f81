# Shared by the module's tests: the repository root (tests run from it) and the command line,
# whose `--format json` output is the contract every function of the module returns.
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _binary():
    return os.environ.get("TRAINSIM_BIN", str(ROOT / "build" / "tools" / "trainsim"))


@pytest.fixture
def cli():
    """Runs `trainsim ARGS...`; returns (exit code, standard output)."""
    def run(*args):
        p = subprocess.run([_binary(), *args], capture_output=True, text=True, check=False)
        return p.returncode, p.stdout
    return run


@pytest.fixture
def cli_json(cli):
    def run(*args):
        code, out = cli(*args, "--format", "json")
        return code, json.loads(out)
    return run

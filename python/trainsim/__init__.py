"""trainsim: does a deep-learning training step fit in GPU memory, where and why does it run
out, what to change, and how fast is each step (docs/python.md).

Every function takes a scenario as a path (str without a newline or ': ', or os.PathLike), as
YAML text, or as a dict of the scenario's keys, and optional ``overrides``, a dict of
``{"key.path": value}`` applied like ``--set key.path=value``. Results are the command line's
``--format json`` documents as dicts and lists (docs/report.md, docs/sweeps.md). The
simulation runs in C++ with the GIL released; nothing is printed.
"""

import json
import os

__all__ = [
    "Error", "ScenarioError", "ResourceError", "InternalError", "Report",
    "run", "report", "diagnose", "fit", "plan", "sweep", "sweep_frame", "import_config", "__version__",
]


class Error(Exception):
    """Base class of the errors trainsim raises."""


class ScenarioError(Error, ValueError):
    """Bad input (the command line's exit code 2): where it is and what was expected.

    ``file``, ``line`` and ``column`` locate the value (None where unknown; a scenario given as
    text or a dict is named "<string>" or "<dict>", an override "--set key=value"), ``key_path``
    names the key and ``message`` is the whole message, as the command line prints it.
    """

    def __init__(self, message, file=None, line=None, column=None, key_path="", detail=""):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.key_path = key_path
        self.detail = detail


class ResourceError(Error, MemoryError):
    """The machine ran out of host memory or threads (the command line's exit code 5)."""


class InternalError(Error, RuntimeError):
    """A broken invariant inside trainsim: a bug (the command line's exit code 1)."""


from . import _core  # noqa: E402  (the exceptions above must exist when _core raises them)

__version__ = _core.version


def _source(scenario, what="scenario"):
    if isinstance(scenario, os.PathLike):
        return _core.Source(os.fspath(scenario))
    if isinstance(scenario, dict):
        # JSON is YAML; one key per line keeps the error positions apart.
        return _core.Source("<dict>", json.dumps(scenario, indent=2))
    if isinstance(scenario, str):
        if "\n" in scenario or ": " in scenario or scenario.lstrip().startswith("{"):
            return _core.Source("<string>", scenario)
        return _core.Source(scenario)
    raise TypeError(f"{what} must be a path, YAML text or a dict, not {type(scenario).__name__}")


def _value(v):
    """A Python value as the YAML text of a --set value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v)
    raise TypeError(f"override values must be str, int, float, bool, None, list or dict, not {type(v).__name__}")


def _sets(overrides):
    if overrides is None:
        return []
    if not isinstance(overrides, dict):
        raise TypeError("overrides must be a dict of {'key.path': value}")
    sets = []
    for key, v in overrides.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"override keys must be non-empty strings (key.path), not {key!r}")
        sets.append(f"{key}={_value(v)}")
    return sets


def run(scenario, overrides=None, *, diagnosis=True):
    """Plays one training step; the JSON report (``trainsim run --format json``) as a dict.

    When the step does not fit, the report holds a ``diagnosis`` with re-simulated remedies
    unless ``diagnosis=False`` (``--no-diagnosis``).
    """
    text, _, _ = _core.run(_source(scenario), _sets(overrides), diagnosis, False)
    return json.loads(text)


class Report:
    """One simulated step with all its reports: ``data`` (the JSON report as a dict), ``text``
    (the text report) and ``html`` (the self-contained HTML report), which Jupyter shows.
    ``report["key"]`` reads ``data``."""

    def __init__(self, data, text, html):
        self.data = data
        self.text = text
        self.html = html

    @property
    def fits(self):
        return self.data["fits"]

    def __getitem__(self, key):
        return self.data[key]

    def _repr_html_(self):
        return self.html

    def __repr__(self):
        return self.text


def report(scenario, overrides=None, *, diagnosis=True):
    """Like run(), but a Report object: its HTML report (with the memory plot of every op)
    shows in Jupyter, and ``print(r)`` prints the text report."""
    text, plain, html = _core.run(_source(scenario), _sets(overrides), diagnosis, True)
    return Report(json.loads(text), plain, html)


def diagnose(scenario, overrides=None):
    """Why the step does not fit and the remedies that do (``trainsim diagnose --format json``):
    a dict with ``name``, ``fits`` and, when it does not fit, ``diagnosis``."""
    return json.loads(_core.diagnose(_source(scenario), _sets(overrides)))


def fit(scenario, key, overrides=None, *, start=1, limit=1 << 40):
    """The largest value of the integer ``key`` that fits (``trainsim fit --find KEY --from
    START --max LIMIT --format json``)."""
    return json.loads(_core.fit(_source(scenario), _sets(overrides), key, start, limit))


def plan(scenario, gpus, overrides=None, *, top=5, objective="throughput", max_micro_batch=8, jobs=0):
    """The best parallel layouts for ``gpus`` GPUs, best first (``trainsim plan --format json``):
    a list of dicts. ``objective``: throughput, memory or cost; ``jobs`` 0 = one worker thread
    per hardware thread."""
    return json.loads(_core.plan(_source(scenario), _sets(overrides), gpus, top, objective,
                                 max_micro_batch, jobs))


def import_config(kind, path, *, gpus=None, gpus_per_node=None, device=None, model=None, seq_len=None):
    """The scenario a framework's config describes (``trainsim import KIND PATH``), as YAML
    text that ``run``, ``plan`` and the others take: ``kind`` is megatron, deepspeed,
    torchtitan, hf-trainer, trl, torchtune, litgpt or llm-foundry (docs/import.md). The
    keyword arguments are the command's options. What the importer left out and assumed is in
    the text's header comments; a config it cannot map raises ScenarioError at the value."""
    return _core.import_config(kind, os.fspath(path), gpus, gpus_per_node, device, model, seq_len)


def sweep(spec, *, jobs=0):
    """Runs a sweep file (a path, YAML text or a dict with ``base`` and ``axes``) on ``jobs``
    worker threads (0 = one per hardware thread), yielding each point's record as a dict as
    soon as it and every earlier point are done: the ``trainsim sweep --jsonl`` record
    (``point``, ``set``, ``status``, ``reason``, ``report``). Closing the generator (or
    dropping it) stops the workers."""
    stream = _core.Sweep(_source(spec, "spec"), jobs, False)
    try:
        while True:
            record = stream.next()
            if record is None:
                return
            yield json.loads(record)
    finally:
        stream.close()


def sweep_frame(spec, *, jobs=0):
    """Runs a sweep and returns a pandas DataFrame with one row per point and the columns of
    ``trainsim sweep --csv`` (point, each axis, status, fits, oom_cause, peak_bytes, ...)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("trainsim.sweep_frame needs pandas (Debian: apt-get install python3-pandas); "
                          "trainsim.sweep(spec) yields the same points as dicts without it") from e
    import io
    stream = _core.Sweep(_source(spec, "spec"), jobs, True)
    try:
        rows = [stream.header]
        while True:
            row = stream.next()
            if row is None:
                break
            rows.append(row)
    finally:
        stream.close()
    return pandas.read_csv(io.StringIO("".join(rows)), keep_default_na=False, na_values=[""])

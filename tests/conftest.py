"""Suite-wide hooks and settings.

``PODNUMA_COLLECT_SCENARIOS=FILE``: every scenario file podnuma loads during
the run is appended (absolute path, one per line) to FILE. The differential
suite (tests/oracle) runs the end-to-end tests that way to send each of
their scenarios through the kubelet oracle too.

At the end of the run: figures tests record as user properties
(``crash_figures``: tests/agent/test_crash.py; ``real_cgroup``: whether the
real cgroup test ran). Reports travel from pytest-xdist workers to the
controller with their properties, so the lines are printed in parallel
runs too.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests assert outcomes, never timings: on a loaded machine a slow
# example is not a failure.
settings.register_profile("podnuma", deadline=None)
settings.load_profile("podnuma")

_COLLECT = os.environ.get("PODNUMA_COLLECT_SCENARIOS")

if _COLLECT:
    import podnuma.inputs.scenario as _load_module
    from podnuma.inputs.text import TextInput as _TextInput

    _record = _COLLECT

    def _write(path: str | Path) -> None:
        if str(path) != "-":
            with open(_record, "a", encoding="utf-8") as fh:
                fh.write(str(Path(path).resolve()) + "\n")

    _original = _load_module.load_scenario

    def _recording_load_scenario(path: Path) -> Any:
        _write(path)
        return _original(path)

    _load_module.load_scenario = _recording_load_scenario  # type: ignore[assignment]

    # the doors read a scenario file through TextInput.read (what="scenario")
    _original_read = _TextInput.read.__func__  # type: ignore[attr-defined]

    def _recording_read(cls: type[_TextInput], path: str | Path, *, what: str) -> Any:
        if what == "scenario":
            _write(path)
        return _original_read(cls, path, what=what)

    _TextInput.read = classmethod(_recording_read)  # type: ignore[method-assign, assignment]

    # ... or, for simulate -o json|yaml, open it to read it in one pass
    from podnuma.inputs.scenario_stream import ScenarioFile as _ScenarioFile

    _original_open = _ScenarioFile.__init__

    def _recording_open(self: _ScenarioFile, path: str | Path, **kw: Any) -> None:
        if kw.get("what", "scenario") == "scenario":
            _write(path)
        _original_open(self, path, **kw)

    _ScenarioFile.__init__ = _recording_open  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _plain_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain output is 120 columns unless ``COLUMNS`` says otherwise; some
    runners (pytest-xdist workers) export ``COLUMNS``, so every test starts
    without it and the tests about it set it themselves."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)


_SUMMARY_KEYS = {"crash_figures": "crash test: ", "real_cgroup": "", "mutation_figures": "CLI mutation run: "}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines: list[str] = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                line = f"{_SUMMARY_KEYS[key]}{value}" if key in _SUMMARY_KEYS else None
                if line is not None and line not in lines:
                    lines.append(line)
    for line in lines:
        terminalreporter.write_line(line)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (``-n N``), tests marked ``xdist_group`` run on
    one worker (tests/cluster: one loopback control plane and kubelet per
    run, not one per worker); the others are spread as ``--dist load``
    spreads them."""
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadgroup"
    # A run started in the background by a shell without job control (a
    # CI runner's `cmd &`, `nohup`) inherits SIGINT ignored, and so would
    # every command a test starts: a command keeps a signal ignored at its
    # start (tests/fleet/test_dask_fork.py), so the tests of Ctrl-C would see
    # none. The tests model a terminal: their commands start with SIGINT's
    # default (an exec resets a handled signal, never an ignored one).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)

"""The crash test's figures at the end of the run, also under pytest-xdist:
the test records them as a user property of its report (reports travel
from the workers to the controller), and the controller prints them."""

from __future__ import annotations

import pytest

_FIGURES: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == "crash_figures":
            _FIGURES.append(str(value))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _FIGURES:
        terminalreporter.write_line(f"crash test: {line}")

"""Figures some tests report at the end of the run, also under
pytest-xdist: a test records them as a user property of its report
(reports travel from the workers to the controller) and the controller
prints them. At the top of tests/ so the controller, which collects
nothing under xdist, loads it (tests/agent/test_crash.py: ``crash_figures``)."""

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

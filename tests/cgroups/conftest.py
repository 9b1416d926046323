"""Reports, at the end of the run, whether the real cgroup test ran."""

from __future__ import annotations

import pytest

#: lines the real cgroup test leaves for the terminal summary
REAL_CGROUP_REPORT: list[str] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in REAL_CGROUP_REPORT:
        terminalreporter.write_line(line)

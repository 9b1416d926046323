"""Reports, at the end of the run, whether the real cgroup test ran.

The test records its outcome as a ``real_cgroup`` user property; reports
travel from pytest-xdist workers to the controller with their properties,
so the summary is printed in parallel runs too.
"""

from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines: list[str] = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == "real_cgroup" and value not in lines:
                    lines.append(str(value))
    for line in lines:
        terminalreporter.write_line(line)

"""The steps table laid out on its widest rows and, without colours,
written as plain lines (:class:`podnuma.render.table._StepsTable`) is the
text rich draws for the whole table: on the runs of the examples and on a
long run whose CPU lists wrap, at widths from 30 to 200 columns, in colour
and without, every column or only those that fit."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement

from podnuma.errors import PodnumaError
from podnuma.inputs.text import TextInput
from podnuma.render import table as layout
from podnuma.render.table import make_console, render_run
from podnuma.scenario.run import RunResult
from podnuma.service import scenario as service

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (30, 50, 80, 120, 200)


def _runs() -> Iterator[tuple[str, RunResult]]:
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        try:
            _, result = service.run(TextInput(path.read_text(), str(path), base_dir=path.parent))
        except PodnumaError:  # not a scenario
            continue
        yield path.name, result
    yield "long", _long_run()


def _long_run() -> RunResult:
    """Pods of mixed sizes added and removed on a 256-CPU node (the oldest
    first, so that the node stays below 200 CPUs): the shared pool's CPU
    list gets long and wraps; every 13th pod asks for more CPUs than the
    node has and is rejected, with a message."""
    lines = [
        "apiVersion: podnuma.io/v1", "kind: Scenario",
        "node: {synthetic: {sockets: 2, numaNodesPerSocket: 4, coresPerNumaNode: 16, threadsPerCore: 2,"
        " memoryPerNumaNode: 256Gi}}",
        "kubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: '0,128'}",
        "steps:",
    ]
    sizes = (1, 2, 4, 8, 3, 16, 2, 6, 1, 12)
    running: list[tuple[str, int]] = []
    for i in range(150):
        cpu = 300 if i % 13 == 12 else sizes[i % len(sizes)]
        if cpu <= 200:
            while sum(n for _, n in running) + cpu > 200:
                lines.append(f"- removePod: bench/{running.pop(0)[0]}")
            running.append((f"p-{i}", cpu))
        lines.append(
            f"- addPod: {{metadata: {{name: p-{i}, namespace: bench, uid: u-{i}}}, spec: {{containers:"
            f" [{{name: app, resources: {{limits: {{cpu: '{cpu}', memory: 1Gi}}}}}}]}}}}")
    _, result = service.run(TextInput("\n".join(lines) + "\n", "long.yaml"))
    assert any(s.op == "addPod" and not s.admitted for s in result.steps)
    return result


class _Whole:
    """The steps table as rich measures and draws it, every cell (the
    reference)."""

    def __init__(self, steps: Any) -> None:
        self.table = steps.table

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table


def _reference(result: RunResult, console: Console, wide: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    original = layout._fitting_steps_table

    def whole(result: RunResult, console: Console, wide: bool) -> tuple[Any, list[str]]:
        steps, hidden = original(result, console, wide)
        return _Whole(steps), hidden

    with monkeypatch.context() as m:
        m.setattr(layout, "_fitting_steps_table", whole)
        return render_run(result, wide=wide, console=console)


def _consoles(width: int) -> Iterator[Console]:
    yield make_console(io.StringIO(), width=width)  # plain
    yield Console(file=io.StringIO(), width=width, force_terminal=True, color_system="truecolor")


def test_the_table_is_the_one_rich_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    compared = plain = 0
    real = layout._plain_text

    def counting(*args: Any) -> str | None:
        nonlocal plain
        text = real(*args)
        plain += text is not None
        return text

    monkeypatch.setattr(layout, "_plain_text", counting)
    for name, result in _runs():
        if not result.steps:
            continue
        for width in WIDTHS:
            for console in _consoles(width):
                for wide in (False, True):
                    got = render_run(result, wide=wide, console=console)
                    assert got == _reference(result, console, wide, monkeypatch), (name, width, wide)
                    compared += 1
    assert compared >= 400, compared
    # written as plain lines in most plain layouts (not where a text cell wraps)
    assert plain >= compared // 4, (plain, compared)


def test_a_long_run_is_written_as_plain_lines_with_its_cpu_lists_wrapped() -> None:
    result = _long_run()
    console = make_console(io.StringIO(), width=120)
    steps, _ = layout._fitting_steps_table(result, console, False)
    options = console.options
    sizing = steps.sizing
    room = options.max_width - sizing._extra_width
    widths = sizing._calculate_column_widths(console, options.update_width(room))
    text = layout._plain_text(steps.table, widths, console, options)
    assert text is not None
    lines = text.splitlines()
    # a step's shared pool on more than one line: it wrapped after a comma
    assert any(line.rstrip().endswith(",") for line in lines), text[:2000]
    assert max(len(line) for line in lines) <= 120

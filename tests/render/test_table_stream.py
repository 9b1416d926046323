"""The table output written as the run is played
(:mod:`podnuma.render.table_stream`) is the text of the whole run's
(:func:`podnuma.render.table.render_run`): on the runs of the examples, a
long run whose CPU lists wrap and a run of hostile names and device ids, at
widths from 20 to 200 columns, ``table`` and ``wide``, into a file and on a
terminal with and without colours, its rows in many blocks and its spool
moved to a file; each of its ways (plain lines, rich drawing the rows read
back a block at a time, and all at once) is taken. Its cells measure as
rich measures them; the command writes it, with colours too."""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from rich.control import strip_control_codes
from rich.padding import Padding

from podnuma.inputs.text import TextInput
from podnuma.render import table as tables
from podnuma.render import table_stream
from podnuma.render.table_stream import CPUS, NAME, TEXT, StreamedTable, measure, rich_cell
from podnuma.scenario.run import RunResult
from podnuma.service import scenario as service

from ..cli.test_set_overrides import STATE_RUN as RUN
from .test_table_layout import _runs

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (20, 30, 50, 80, 120, 200)


def _hostile_run() -> RunResult:
    """Names and device ids rich treats apart: characters two columns wide,
    a tab, a long id without a break, long pod names; pods with devices of
    two resources (control codes and line separators are refused in device
    ids: tests/cli/test_control_characters.py)."""
    ids = ["dev-bell", "宽字符设备", "a b", "x" * 70, "emoji-🙂", "tab\there"]
    doc: dict[str, object] = {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {
            "synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 4,
                          "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"},
            "devices": {
                "example.com/gpu": [{"id": i, "numaNodes": [n % 2]} for n, i in enumerate(ids)],
                "example.com/nic": [{"id": f"vf{n}", "numaNodes": [n % 2]} for n in range(len(ids))],
            },
        },
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
        "steps": [
            {"addPod": {
                "metadata": {"name": ("p" + "q" * 40 + f"-{i}") if i % 2 else f"p-{i}",
                             "namespace": "hostile", "uid": f"u-{i}"},
                "spec": {"containers": [{"name": f"c{i}", "resources": {"limits": {
                    "cpu": "1", "memory": "1Gi", "example.com/gpu": "1", "example.com/nic": "1"}}}]},
            }}
            for i in range(len(ids))
        ],
    }
    _, result = service.run(TextInput(json.dumps(doc), "hostile.json"))
    assert sum(bool(c.devices) for s in result.steps for c in s.containers) == len(ids)
    return result


def _terminal(width: int, colours: bool = True) -> Console:
    """The console of a terminal ``width`` columns wide (with colours, or
    none: ``TERM=dumb``), writing to a string."""
    return Console(file=io.StringIO(), force_terminal=True, width=width,
                   color_system="truecolor" if colours else None)


def _streamed(result: RunResult, console: Console, wide: bool) -> str:
    out = io.StringIO()
    with StreamedTable(result.scenario, result.machine, result.node,
                       styled=StreamedTable.styled_for(console)) as table:
        for step in result.steps:
            table.add(step)
        table.write(out, console, wide=wide, restored=lambda: result)
    return out.getvalue()


@pytest.mark.parametrize("by_rows", [True, False], ids=["rows", "blocks"])
def test_the_streamed_table_is_the_whole_runs(by_rows: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way of writing the table gives the whole run's text: plain
    lines, a row at a time from each distinct cell rendered once, rich a
    block of rows at a time (where the row way is not there: another rich),
    and all at once (where the widths cannot be fixed)."""
    ways = {"plain": 0, "rows": 0, "blocks": 0, "whole": 0, "cells": 0, "drawn": 0}
    plain, rows, blocks = StreamedTable._plain, StreamedTable._by_rows, StreamedTable._by_blocks

    def counted_plain(self: StreamedTable, *args: object) -> bool:
        got = plain(self, *args)  # type: ignore[arg-type]
        ways["plain"] += got
        return got

    def counted_rows(self: StreamedTable, *args: object) -> bool:
        got = by_rows and rows(self, *args)  # type: ignore[arg-type]
        ways["rows"] += got
        return got

    def counted_blocks(self: StreamedTable, *args: object) -> bool:
        got = blocks(self, *args)  # type: ignore[arg-type]
        ways["blocks" if got else "whole"] += 1
        return got

    through = table_stream._through_shape

    def counted_through(cell: object, styled: bool, shapes: dict[object, object],
                        drawn: Callable[[object], list[str]]) -> list[str]:
        def counted_drawn(c: object) -> list[str]:
            ways["drawn"] += 1
            return drawn(c)

        ways["cells"] += 1
        return through(cell, styled, shapes, counted_drawn)  # type: ignore[arg-type]

    monkeypatch.setattr(StreamedTable, "_plain", counted_plain)
    monkeypatch.setattr(StreamedTable, "_by_rows", counted_rows)
    monkeypatch.setattr(table_stream, "_through_shape", counted_through)
    monkeypatch.setattr(StreamedTable, "_by_blocks", counted_blocks)
    monkeypatch.setattr(table_stream, "_KNOWN", 7)  # the cell caches start afresh again and again
    monkeypatch.setattr(table_stream, "_CHUNK", 5)  # blocks that end inside a step and at its end
    runs = [*_runs(), ("hostile", _hostile_run())]
    consoles = {
        "file": lambda w: tables.make_console(io.StringIO(), width=w),
        "colours": _terminal,
        "terminal without colours": lambda w: _terminal(w, colours=False),
    }
    compared = 0
    for label, result in runs:
        for where, console in consoles.items():
            for width in WIDTHS:
                for wide in (False, True):
                    whole = tables.render_run(result, wide=wide, console=console(width))
                    streamed = _streamed(result, console(width), wide)
                    assert streamed == whole, (label, where, width, wide)
                    compared += 1
    assert compared == len(runs) * len(consoles) * len(WIDTHS) * 2
    # every way was taken: plain lines, by rows or blocks, rich all at once
    assert ways["plain"] > 50 and ways["whole"] > 0, ways
    assert (ways["rows"] > 100 and not ways["blocks"]) if by_rows else (ways["blocks"] > 100 and not ways["rows"])
    if by_rows:  # distinct cells drawn from their shapes, once per shape: fewer drawn by rich
        assert ways["cells"] > 1000 and ways["drawn"] < ways["cells"] * 0.9, ways


def test_styles_are_kept_on_a_terminal() -> None:
    """On a terminal with colours the streamed table has the styles of the
    whole run's (a rejection in red, exclusive CPUs in bold), not plain text."""
    result = dict(_runs())["long"]
    text = _streamed(result, _terminal(120), False)
    assert "\x1b[1;31m✗ rejected" in text  # a rejection: bold red
    assert "\x1b[1;36mexclusive" in text  # an exclusive container's isolation: bold cyan
    assert text == tables.render_run(result, console=_terminal(120))
    assert "\x1b[" not in _streamed(result, tables.make_console(io.StringIO(), width=120), False)


def test_rows_in_many_blocks_and_a_spool_on_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_stream, "_BLOCK", 7)
    monkeypatch.setattr(table_stream, "_SPOOL", 512)
    monkeypatch.setattr(table_stream, "_KNOWN", 3)  # the caches start afresh again and again
    monkeypatch.setattr(table_stream, "_CHUNK", 3)
    result = dict(_runs())["long"]
    for width in (40, 120):
        for console in (tables.make_console(io.StringIO(), width=width), _terminal(width)):
            assert _streamed(result, console, False) == tables.render_run(result, console=console)


def _podnuma(*args: str) -> str:
    got = subprocess.run([sys.executable, "-m", "podnuma.cli", *args], capture_output=True, text=True,
                         check=True, env={"PATH": "/usr/bin:/bin", "COLUMNS": "90"})
    return got.stdout


def test_a_run_without_steps_shows_its_restored_state(tmp_path: Path) -> None:
    """A scenario of the state a run left and no steps: the command writes
    the restored pods' table, as for the whole run."""
    (tmp_path / "run.yaml").write_text(RUN)
    node = tmp_path / "node.yaml"
    node.write_text(RUN.split("kubeletConfig:")[0].split("kind: Scenario\n")[1])
    _podnuma("simulate", str(tmp_path / "run.yaml"), "--checkpoint-dir", str(tmp_path / "ck"))
    restored = tmp_path / "restored.yaml"
    restored.write_text(_podnuma("state", "inspect", str(tmp_path / "ck"), "--as-scenario", "--node", str(node),
                                 "--kubelet-config", str(tmp_path / "run.yaml"), "-o", "yaml"))
    _, result = service.run(TextInput(restored.read_text(), str(restored), base_dir=tmp_path))
    assert not result.steps and result.restored
    console = tables.make_console(io.StringIO(), width=90)
    assert _podnuma("simulate", str(restored)) == tables.render_run(result, console=console)


def test_cells_measure_as_rich_measures_them() -> None:
    probe = Console(width=1 << 16, file=io.StringIO())
    rng = random.Random(5)
    alphabet = ["0", "1", "-", "12", "255", ",", " ", "\n", "a", "/", ".", "_", "宽", "\x07", "\u2028",
                "\t", "🙂", "x" * 20]
    for _ in range(4000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        text = strip_control_codes(text)
        for kind in (TEXT, CPUS, NAME):
            m = rich_cell(kind + text).__rich_measure__(probe, probe.options)  # type: ignore[union-attr]
            assert measure(kind + text) == (m.minimum, m.maximum), (kind, text)


def test_the_command_writes_it(tmp_path: Path) -> None:
    """``podnuma simulate FILE`` into a pipe (no colours): the table of the
    whole run, as rich draws it at the plain width."""
    scenario = ROOT / "examples" / "pod-level" / "init-and-sidecars.yaml"
    _, result = service.run(TextInput(scenario.read_text(), str(scenario), base_dir=scenario.parent))
    for output, wide in (("table", False), ("wide", True)):
        console = tables.make_console(io.StringIO(), width=90)
        assert _podnuma("simulate", str(scenario), "-o", output) == tables.render_run(
            result, wide=wide, console=console)


def test_the_widest_rows_are_those_rich_sizes_the_table_by() -> None:
    """The rows kept while the steps come are the rows
    :func:`podnuma.render.table._extremes` picks of the whole table: on
    random rows whose cells grow and shrink a character at a time."""
    rng = random.Random(11)
    for _ in range(300):
        rows: list[tuple[str, ...]] = []
        for _ in range(rng.randint(1, 40)):
            cells = []
            for kind in (TEXT, NAME, TEXT, NAME, CPUS, TEXT):
                size = rng.randint(0, 24)
                text = "".join(rng.choice("ab-,/ 0\n宽") if rng.random() < 0.2 else "a" for _ in range(size))
                cells.append(kind + strip_control_codes(text))
            rows.append(tuple(cells))
        widest = table_stream._Widest()
        for cells in rows:
            widest.add(cells)
        expected = tables._extremes([([rich_cell(c) for c in cells], False) for cells in rows])
        got = widest.rows()
        plain = [[getattr(c, "plain", None) for c in cells] for cells, _ in got]
        assert plain == [[getattr(c, "plain", None) for c in cells] for cells, _ in expected]


SMALL = """\
apiVersion: podnuma.io/v1
kind: Scenario
node:
  name: %s
  synthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 4, threadsPerCore: 1, memoryPerNumaNode: 8Gi}
kubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
steps:
- addPod:
    metadata: {name: a, namespace: d, uid: a}
    spec: {containers: [{name: c, resources: {limits: {cpu: "1", memory: 1Gi}}}]}
"""

#: the tables of the whole run, printed as the command printed them before
#: it streamed (``render_run`` for standard output's console, then echoed)
WHOLE = """
import sys
from podnuma.cli.options import echo
from podnuma.inputs.text import TextInput
from podnuma.render.table import render_run
from podnuma.service import scenario as service
_, result = service.run(TextInput.read(sys.argv[1], what="scenario"))
echo(render_run(result))
"""


def _both(path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    base = {"PATH": "/usr/bin:/bin", "COLUMNS": "90", **env}
    return tuple(subprocess.run(cmd, capture_output=True, env=base, check=False) for cmd in (
        [sys.executable, "-m", "podnuma.cli", "simulate", str(path)],
        [sys.executable, "-c", WHOLE, str(path)],
    ))


def test_a_terminal_without_colours_keeps_the_whole_runs_tables(tmp_path: Path) -> None:
    """``TERM=dumb`` with ``FORCE_COLOR``: a terminal whose console has no
    colours, where rich's padding is printed as it is: the whole run's
    path, byte for byte."""
    path = tmp_path / "s.yaml"
    path.write_text(SMALL % "node-1")
    new, old = _both(path, {"FORCE_COLOR": "1", "TERM": "dumb"})
    assert new.returncode == old.returncode == 0
    assert new.stdout == old.stdout and any(line.endswith(b" ") for line in new.stdout.splitlines())


def test_an_output_that_cannot_be_encoded_writes_nothing(tmp_path: Path) -> None:
    """Standard output in Latin-1 cannot take the table's check marks: the
    command fails before a byte is out, as when the text was printed whole
    (a long run's spool is not written in part)."""
    path = tmp_path / "s.yaml"
    path.write_text(SMALL.replace("steps:\n", "steps:\n" + "- reconcile: {}\n" * 3000) % "node-1")
    new, old = _both(path, {"PYTHONIOENCODING": "latin-1"})
    assert new.returncode == old.returncode == 1
    assert new.stdout == old.stdout == b""
    assert b"UnicodeEncodeError" in new.stderr


def test_a_lone_surrogate_is_refused_before_the_table_is_drawn(tmp_path: Path) -> None:
    """A name with a lone surrogate (YAML's ``\\ud83d``) has no UTF-8, so
    no answer could be written with it: the scenario is refused where it is
    read, in one line naming the field, before a row or a checkpoint is
    written, whatever standard output's error handler."""
    path = tmp_path / "s.yaml"
    path.write_text(SMALL % '"n\\ud83d"')
    for encoding in ("utf-8:backslashreplace", "utf-8"):
        proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "simulate", str(path), "--checkpoint-dir",
                               str(tmp_path / "ck")], capture_output=True, check=False,
                              env={"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": encoding})
        assert proc.returncode == 2 and proc.stdout == b"", proc.stderr
        (line,) = proc.stderr.decode().splitlines()
        assert line.startswith(f"error: {path}: node.name: not Unicode text: a lone surrogate (\\ud83d")
        assert not (tmp_path / "ck").exists()


def test_a_long_output_that_cannot_be_encoded_writes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spool printed on a Latin-1 standard output: past a mebibyte of
    text, a character it cannot take still stops the write before a byte
    is out (the spool is written in one piece there)."""
    from podnuma.cli.simulate_stream import _print
    from podnuma.inputs.spool import spooled

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="latin-1")
    monkeypatch.setattr(sys, "stdout", out)
    with spooled(1 << 16, mode="w+", encoding="utf-8", errors="surrogatepass") as spool:
        spool.write("step\n" * 400_000 + "✓ admitted\n")
        with pytest.raises(UnicodeEncodeError):
            _print(spool)
    assert raw.getvalue() == b""


def _drawn_by_rich(console: Console, cell: object, styled: bool, width: int, pads: tuple[int, int],
                   justify: str) -> list[str]:
    """A cell's lines as the row way draws one with rich itself."""
    rich = tables.cell_of(cell) if styled else rich_cell(cell)  # type: ignore[arg-type]
    options = console.options.update(width=width, justify=justify, height=None)  # type: ignore[arg-type]
    lines = console.render_lines(Padding(rich, (0, pads[0], 0, pads[1])), options)
    return [console._render_buffer(line) for line in lines]


def test_a_cell_drawn_from_its_shape_is_the_cell_drawn_by_rich() -> None:
    """A cell of printable ASCII without spaces is drawn once per shape (its
    kind, styles and line lengths) and its characters put back: on random
    cells (text, CPU lists and names; one to three pieces, line breaks,
    styles, break points, some longer than the column so that they wrap),
    at random widths, pads and justifications, on a colour terminal and
    into a file, the lines are rich's own. Shapes are used (most cells,
    lines that wrap at their break points among them), and refused where a
    piece is cut or a style changes between two break points."""
    rng = random.Random(5)
    alphabet = "0123456789,-/._abcxyzXYZ:()[]{}~*@"
    styles = ["", "bold", "dim", "bold cyan", "red", "green on black"]
    kinds = [TEXT, CPUS, NAME]
    used = refused = changes = compared = 0
    wrapped = dict.fromkeys((TEXT, CPUS, NAME), 0)
    for colours in (True, False):
        console = _terminal(200) if colours else tables.make_console(io.StringIO(), width=200)
        for _ in range(3000):
            styled = colours
            kind = rng.choice(kinds)
            pieces = []
            for k in range(rng.choice([1, 1, 1, 2, 3])):
                text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
                if rng.random() < 0.3:  # a piece ending at a break point
                    text += rng.choice(",-/._")
                if k and rng.random() < 0.6:
                    text = "\n" + text
                pieces.append((text, rng.choice(styles) if styled else ""))
            cell = (kind, tuple(pieces)) if styled else kind + "".join(p for p, _ in pieces)
            width = rng.randint(3, 40)
            pads = (rng.randint(0, 1), rng.randint(0, 1))
            justify = rng.choice(["left", "right", "center"])
            inner = max(1, width - sum(pads))

            def draw(c: object) -> list[str]:
                return _drawn_by_rich(console, c, styled, width, pads, justify)  # noqa: B023

            shapes: dict[object, object] = {}
            got = table_stream._through_shape(cell, styled, shapes, draw)  # type: ignore[arg-type]
            assert got == draw(cell), (cell, width, pads, justify)
            compared += 1
            shape = next(iter(shapes.values()))
            used += shape is not None
            text = "".join(p for p, _ in pieces)
            kept = {TEXT: "\n", CPUS: ",\n", NAME: "-/._\n"}[kind]
            runs = re.split(f"[{re.escape(kept)}]", text)
            if any(len(run) > inner for run in runs):
                refused += 1
                assert shape is None, (cell, width)  # a run cut: drawn by rich
            elif any(k and s and pieces[k - 1][0][-1] not in kept and p[0] not in kept
                     for k, (p, s) in enumerate(pieces)):
                # a styled piece within a run (a span of its own): drawn by rich
                assert shape is None, cell
                changes += 1
            elif any(len(line) > inner for line in text.split("\n")):
                wrapped[kind] += shape is not None  # wrapped at its break points: the shape's lines
    assert compared == 6000 and used > 2500 and refused > 300 and changes > 100 and min(wrapped[CPUS], wrapped[NAME]) > 30, \
        (used, refused, changes, wrapped)
    # a link (its address may hold an x, a run the cell loses to an
    # ellipsis): drawn by rich (each draw gives the link an id of its own)
    console = _terminal(10)
    cell = (TEXT, (("", ""), ("ab\n", "link http://xx"), ("c", "")))
    shapes = {}

    def ellipsis(c: object) -> list[str]:
        options = console.options.update(width=1, no_wrap=True, overflow="ellipsis", height=None)
        lines = console.render_lines(Padding(tables.cell_of(c), 0), options)  # type: ignore[arg-type]
        return [re.sub(r"id=\d+;", "", console._render_buffer(line)) for line in lines]

    assert table_stream._through_shape(cell, True, shapes, ellipsis) == ellipsis(cell)
    assert "http://xx" in ellipsis(cell)[0] and list(shapes.values()) == [None]
    # a cell with a space or a character that is not printable ASCII has no shape
    assert table_stream._shape_of((TEXT, (("a b", ""),)), True) is None
    assert table_stream._shape_of(TEXT + "宽", False) is None
    assert table_stream._shape_of(TEXT + "a\tb", False) is None
    assert table_stream._shape_of(TEXT + "", False) is None


def test_plain_cells_are_the_parts_text_without_control_codes() -> None:
    """The plain cell of a cell's parts is its kind and its pieces' text,
    rich's control codes taken out (each of them, alone and among others;
    line breaks and other text kept)."""
    rng = random.Random(3)
    alphabet = ["a", "Z", "0", ",", " ", "\n", "\t", "\x07", "\x08", "\x0b", "\x0c", "\r", "\x1b", "宽", "🙂"]
    for _ in range(2000):
        cells = tuple((rng.choice([TEXT, CPUS, NAME]),
                       tuple(("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))), "bold")
                             for _ in range(rng.randint(0, 3))))
                      for _ in range(rng.randint(1, 4)))
        expected = tuple(kind + strip_control_codes("".join(p for p, _ in pieces)) for kind, pieces in cells)
        assert table_stream.plain_cells(cells) == expected, cells
    assert table_stream.plain_cells(((TEXT, (("a\x07b\rc", ""),)),)) == (TEXT + "abc",)

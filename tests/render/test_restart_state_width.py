"""``podnuma restart`` and ``podnuma state inspect`` (``-o table``, and
``restart -o wide``) fit the width as the other tables do (docs/cli.md):
``COLUMNS``, else 120 columns into a pipe. Every printed line is at most
that wide; a cell wraps at its words (a CPU list after its commas) and
loses nothing: each column read down the narrow table holds the same
characters, in the same order, as at 1000 columns; a column that cannot
fit is left out and named in the note ``(left out to fit N columns: ...;
-o json has them)``; a word is cut only when nothing else fits, and then
with the mark ``↩`` at the end of each line it is cut at. The commands run
through the real command line (click's runner), ``COLUMNS`` in their
environment."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli.app import cli

ROOT = Path(__file__).resolve().parents[2]
RESTART = ROOT / "examples" / "pod-level" / "restart.yaml"
MEMORY_STATIC = ROOT / "examples" / "topology" / "pod-scope.yaml"
WIDTHS = (40, 60, 80, 200)
REFERENCE = 1000  # (wide enough for every table on one line a row)
MARK = "↩"
NOTE = re.compile(r"^\(left out to fit (\d+) columns: (.*); -o json has them\)$")

# the device manager's checkpoint as kubelet v1.37.2 writes it (as in
# tests/analysis/test_state.py): pod u1, devices on two containers
DEVICE_CHECKPOINT = (
    b'{"Data":{"PodDeviceEntries":[{"PodUID":"u1","ContainerName":"app","ResourceName":"example.com/gpu",'
    b'"DeviceIDs":{"0":["gpu0","gpu1"],"1":["gpu2"]},"AllocResp":"CgYKAUESAWIaFAoGL2Rldi94EgYvZGV2L3kaAnJ3"},'
    b'{"PodUID":"u1","ContainerName":"side","ResourceName":"example.com/nic","DeviceIDs":{"-1":["nic0"]},'
    b'"AllocResp":""}],"RegisteredDevices":{"example.com/gpu":["gpu0","gpu1","gpu2","gpu3"],'
    b'"example.com/nic":["nic0"]}},"Checksum":1052997933}'
)


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes (wide characters 2, combining 0),
    measured apart from the renderer's own measure."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def _slice(line: str, start: int, end: int) -> str:
    """The characters of ``line`` in terminal cells ``start`` to ``end``."""
    out, pos = [], 0
    for c in line:
        if start <= pos < end:
            out.append(c)
        pos += display_width(c)
    return "".join(out)


def _squeezed(text: str) -> str:
    """``text`` without its spaces and line breaks, and without cut marks:
    what must survive any wrapping."""
    return re.sub(r"\s+", "", text).replace(MARK, "")


@dataclass
class Table:
    headers: list[str]
    #: per column, the text of each of its lines (a cell's lines one after
    #: another, stripped)
    columns: list[list[str]]
    lines: list[str]
    left_out: list[str] = field(default_factory=list)
    note_width: int | None = None


@dataclass
class Page:
    tables: list[Table]
    prose: list[str]  # the lines of no table (nor of a table's note)


def parse(text: str) -> Page:
    """The tables of ``text`` (a header, its rule of ``─`` runs, the rows
    up to a blank line, the note of left-out columns) and the other lines.
    The columns are read at the cells of the rule's runs; nothing of a
    table may stand outside them."""
    lines = text.split("\n")
    assert lines[-1] == "", "the output ends with a line break"
    lines = lines[:-1]
    in_table = [False] * len(lines)
    tables = []
    for i, rule in enumerate(lines):
        if not re.fullmatch(r"─[─ ]*", rule):
            continue
        spans = [(m.start(), m.end()) for m in re.finditer("─+", rule)]
        top = i
        while top > 0 and lines[top - 1].strip():
            top -= 1
        end = i + 1
        while end < len(lines) and lines[end].strip() and not lines[end].startswith("(left out to fit"):
            end += 1
        block = lines[top:i] + lines[i + 1:end]
        for line in block:  # (between and after the columns: blank)
            edges = [0, *(p for s in spans for p in s), display_width(line) + 1]
            for a, b in zip(edges[0::2], edges[1::2], strict=True):
                assert _slice(line, a, b).strip() == "", f"text outside the columns: {line!r}"
        head = [" ".join(_slice(h, a, b).strip() for h in lines[top:i] if _slice(h, a, b).strip())
                for a, b in spans]
        cols = [[_slice(line, a, b).strip() for line in lines[i + 1:end]] for a, b in spans]
        table = Table(head, cols, lines[top:end])
        if end < len(lines) and lines[end].startswith("(left out to fit"):
            note = end
            while not lines[end].rstrip().endswith(")"):
                end += 1
            joined = " ".join(line.strip() for line in lines[note:end + 1])
            m = NOTE.match(joined)
            assert m, joined
            table.note_width = int(m.group(1))
            table.left_out = m.group(2).split(", ")
            end += 1
        for k in range(top, end):
            in_table[k] = True
        tables.append(table)
    return Page(tables, [line for line, t in zip(lines, in_table, strict=True) if not t])


def run(args: list[str], columns: int | None) -> str:
    env = {} if columns is None else {"COLUMNS": str(columns)}
    res = CliRunner().invoke(cli, args, env=env)
    assert res.exit_code == 0, res.output
    return res.stdout


def assert_breaks_at_words(lines: list[str], whole: list[str], what: str) -> None:
    """``lines`` (a column's, or the prose's) hold ``whole``'s texts (a
    cell, or a line, each) broken only where a reader expects it: at a
    space, after a separator (``,-/._``), between the words of a CamelCase
    name, or with the cut mark at the end of the line."""
    stream, ends, spaces = "", set(), set()
    for text in whole:
        for c in text:
            if c.isspace():
                spaces.add(len(stream))
            else:
                stream += c
        ends.add(len(stream))
    pos = 0
    for line in lines:
        pos += len(_squeezed(line))
        if not line or pos in ends or line.endswith(MARK):
            continue
        before, after = stream[pos - 1], stream[pos]
        camel = after.isupper() and (before.islower() or before.isdigit()
                                     or (pos + 1 < len(stream) and stream[pos + 1].islower()))
        assert pos in spaces or before in ",-/._" or camel, (
            f"{what}: {stream[max(0, pos - 12):pos]!r} | {stream[pos:pos + 12]!r} broken inside a word")


def assert_fits_and_keeps_everything(args: list[str], width: int, *, cuts: bool = False) -> Page:
    """At ``width``: every line fits; every column not left out reads (its
    characters, in order) as at 1000 columns, its header whole, broken at
    words only; the note names exactly the columns left out; the prose
    keeps every character, broken at words only; no word cut (the mark)
    unless ``cuts``."""
    narrow, reference = run(args, width), run(args, REFERENCE)
    assert cuts or MARK not in narrow
    for line in narrow.splitlines():
        assert display_width(line) <= width, f"{display_width(line)} > {width}: {line!r}"
    got, ref = parse(narrow), parse(reference)
    assert len(got.tables) == len(ref.tables) > 0
    for t, r in zip(got.tables, ref.tables, strict=True):
        assert r.left_out == [] and all(len(c) == len(r.columns[0]) for c in r.columns)  # (a row a line)
        assert [h for h in r.headers if h in t.headers] == t.headers  # (whole, in their order)
        missing = [h for h in r.headers if h not in t.headers]
        assert sorted(t.left_out) == sorted(missing), (t.left_out, missing)  # (in the order they went)
        if missing:
            assert t.note_width == width
        for h, column in zip(t.headers, t.columns, strict=True):
            expected = r.columns[r.headers.index(h)]
            assert _squeezed("".join(column)) == _squeezed("".join(expected)), h
            assert_breaks_at_words(column, expected, h)
    assert _squeezed("".join(got.prose)) == _squeezed("".join(ref.prose))
    assert_breaks_at_words(got.prose, ref.prose, "prose")
    return got


def _rows(table: Table, anchor: str) -> list[dict[str, str]]:
    """The table's rows, a row starting at each line where the ``anchor``
    column (filled in every row) has text: each column's text in it."""
    k = table.headers.index(anchor)
    starts = [i for i, text in enumerate(table.columns[k]) if text]
    bounds = [*starts, len(table.columns[k])]
    return [{h: " ".join(x for x in col[a:b] if x) for h, col in zip(table.headers, table.columns, strict=True)}
            for a, b in zip(bounds, bounds[1:], strict=False)]


# -- restart -----------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("extra", [[], ["-o", "wide"], ["--set", "topologyManagerPolicy=single-numa-node"]],
                         ids=["table", "wide", "rejected"])
def test_restart_fits_the_width_and_loses_nothing(width: int, extra: list[str]) -> None:
    args = ["restart", str(RESTART), *extra]
    page = assert_fits_and_keeps_everything(args, width)
    (table,) = page.tables
    assert table.headers[:2] == ["pod", "outcome"]  # (never left out)
    # each pod's row holds its own cells (a cell's lines stay in its row)
    doc = json.loads(run([*[a for a in args if a not in ("-o", "wide")], "-o", "json"], width))
    rows = _rows(table, "outcome")
    assert [_squeezed(r["pod"]) for r in rows] == [
        _squeezed(p["pod"] + (" (pod-level)" if p["podLevel"] else "")) for p in doc["pods"]]
    assert [r["outcome"].split()[-1] for r in rows] == [p["outcome"] for p in doc["pods"]]
    if "reason" in table.headers:
        assert [_squeezed(r["reason"]) for r in rows] == [_squeezed(p.get("reason") or "") for p in doc["pods"]]


def test_restart_narrow_leaves_out_columns_and_says_which() -> None:
    page = assert_fits_and_keeps_everything(["restart", str(RESTART)], 40)
    (table,) = page.tables
    assert table.left_out and set(table.left_out) <= {"NUMA before", "NUMA after", "CPUs before", "reason",
                                                      "CPUs after"}
    assert "(left out to fit 40 columns: " in run(["restart", str(RESTART)], 40)
    wide = assert_fits_and_keeps_everything(["restart", str(RESTART), "-o", "wide"], 60).tables[0]
    assert "why" in wide.headers and wide.left_out  # (the why wrapped, not left out)
    assert max(len(x) for x in wide.columns[wide.headers.index("why")]) < 60


def test_restart_at_200_columns_is_the_plain_table() -> None:
    """Wide enough: one line a row, nothing left out (as before)."""
    (table,) = parse(run(["restart", str(RESTART)], 200)).tables
    assert table.left_out == [] and len(table.lines) == 2 + 3
    assert table.lines[0].split("  ")[0] == "pod"


def test_restart_without_columns_into_a_pipe_is_120_wide() -> None:
    """No ``COLUMNS`` and not a terminal: 120 columns, as ``simulate``'s
    and ``explain``'s tables; ``-o wide`` too (it wraps its why)."""
    for extra in ([], ["-o", "wide"]):
        text = run(["restart", str(RESTART), *extra], None)
        assert max(display_width(line) for line in text.splitlines()) <= 120
    assert text == run(["restart", str(RESTART), "-o", "wide"], 120)


def test_restart_json_and_yaml_ignore_the_width() -> None:
    for fmt in ("json", "yaml"):
        assert run(["restart", str(RESTART), "-o", fmt], 40) == run(["restart", str(RESTART), "-o", fmt], None)


def test_a_word_wider_than_any_column_is_cut_with_a_mark(tmp_path: Path) -> None:
    """A name of 52 characters without a break, in 40 columns: cut, each
    line it is cut at ended by the mark, nothing of it lost (the checks of
    :func:`assert_fits_and_keeps_everything`); no other cell is cut."""
    long = "averyveryverylongpodnamewithoutanyseparatorsatallxyz"
    doc = yaml.safe_load(RESTART.read_text())
    doc["steps"][0]["addPod"]["metadata"]["name"] = long
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    (table,) = assert_fits_and_keeps_everything(["restart", str(path)], 40, cuts=True).tables
    pods = table.columns[table.headers.index("pod")]
    cut = [p for p in pods if p.endswith(MARK)]
    assert len(cut) >= 1 and all(MARK not in p.removesuffix(MARK) for p in pods)
    assert f"shop/{long}" in "".join(p.removesuffix(MARK) for p in pods)
    assert all(MARK not in c for h, col in zip(table.headers, table.columns, strict=True) if h != "pod" for c in col)
    assert table.left_out  # (the optional columns went first)


# -- state inspect -----------------------------------------------------------


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Checkpoints of a static memory manager (the per-NUMA table), with a
    device checkpoint (the devices column) and a pods dump (names)."""
    d = tmp_path_factory.mktemp("state") / "a-rather-long-directory-name-for-the-title" / "state"
    res = CliRunner().invoke(cli, ["simulate", str(MEMORY_STATIC), "--checkpoint-dir", str(d)])
    assert res.exit_code == 0, res.output
    (d / "device-plugins").mkdir(exist_ok=True)
    (d / "device-plugins" / "kubelet_internal_checkpoint").write_bytes(DEVICE_CHECKPOINT)
    return d


@pytest.fixture(scope="module")
def pods_dump(state_dir: Path) -> Path:
    uids = json.loads((state_dir / "cpu_manager_state").read_text())["entries"]
    items: list[dict[str, Any]] = [
        {"metadata": {"name": f"pod-number-{k}-with-a-long-name", "namespace": "a-namespace", "uid": uid},
         "spec": {"nodeName": "n1"}} for k, uid in enumerate(sorted(uids))]
    path = state_dir.parent / "pods.json"
    path.write_text(json.dumps({"kind": "List", "items": items}))
    return path


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("names", [False, True], ids=["uids", "pods-dump"])
def test_state_inspect_fits_the_width_and_loses_nothing(
    width: int, names: bool, state_dir: Path, pods_dump: Path
) -> None:
    args = ["state", "inspect", str(state_dir), *(["--pods", str(pods_dump)] if names else [])]
    page = assert_fits_and_keeps_everything(args, width)
    pods, memory = page.tables
    assert pods.headers[:4] == ["pod", "container", "CPUs", "NUMA"]
    assert memory.headers[:2] == ["NUMA", "type"] and "free" in memory.headers
    # a size or a type is never broken: a line a row in the per-NUMA table
    assert all(len(c) == len(memory.columns[0]) == 12 for c in memory.columns)
    if width >= 200:
        assert pods.left_out == memory.left_out == []


def test_state_inspect_narrow_says_what_it_left_out(state_dir: Path) -> None:
    page = assert_fits_and_keeps_everything(["state", "inspect", str(state_dir)], 40)
    pods, memory = page.tables
    assert "devices" in pods.left_out and "assignments" in memory.left_out
    text = run(["state", "inspect", str(state_dir)], 40)
    assert "(left out to fit 40 columns: devices" in text


def test_state_inspect_json_ignores_the_width(state_dir: Path) -> None:
    args = ["state", "inspect", str(state_dir), "-o", "json"]
    assert run(args, 40) == run(args, None)


def test_header_colour_rules_on_a_long_table_mark_the_header_lines_only() -> None:
    """The colour rules of the fitted tables (a header wrapped on up to four
    lines, the line above the rule) on a table of 2,000 rows of 200
    characters: exactly the header lines are matched. (The rules were
    written with nested ``.*\\S.*``, which backtracks on every long line:
    this text took minutes; a linear rule takes milliseconds.)"""
    import re

    from podnuma.render.state import HEADER_LINES_RULE, STATE_COLOURS

    header = ["pod      outcome", "         before", "  CPUs   after"]
    rows = [("x " * 100).rstrip()] * 2000
    text = "\n".join([*rows, "", *header, "─────── ───────", *rows]) + "\n"
    starts = {text.index(line + "\n─") if i == 2 else text.index(line + "\n") for i, line in enumerate(header)}
    multi = {m.start() for m in re.finditer(HEADER_LINES_RULE[0], text)}
    last = {m.start() for m in re.finditer(STATE_COLOURS[0][0], text)}
    assert multi | last == starts
    assert last == {text.index(header[2] + "\n─")}

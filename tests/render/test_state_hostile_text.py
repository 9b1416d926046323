"""``podnuma state inspect`` and ``podnuma restart`` with hostile text:
control characters in the checkpoints' pod UIDs and container names (and
in the directory's name) are shown escaped (``fieldkit.inert``; a tab as
``\\t``), never sent to the terminal, and measured as shown; wide
characters, short lines and narrow widths never make a line wider than
``COLUMNS`` where a narrower one can be; a ``COLUMNS`` of no use is
ignored on a terminal as into a pipe. The commands run through the real
command line (click's runner; a pseudo-terminal for the terminal's
width)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from rich.cells import cell_len

from podnuma.cli.app import cli
from podnuma.cm.devicemanager.checkpoint import DeviceEntry, encode_device_checkpoint
from podnuma.cm.memorymanager.checkpoint import MemoryCheckpointData, encode_memory_checkpoint
from podnuma.cm.memorymanager.state import Block, MemoryTable, NUMANodeState
from podnuma.fieldkit import inert
from podnuma.render.wrap import paragraph

ROOT = Path(__file__).resolve().parents[2]
RESTART = ROOT / "examples" / "pod-level" / "restart.yaml"
GI = 1 << 30
UID = "日本語日本語\x1b[31m😀" + "x" * 12
CONTAINER = "a\x07b\tc\nd\x7fe\x85f"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes (wide characters 2, combining 0; a
    control character 1, as no terminal shows it), the larger of this and
    the renderer's own measure."""
    own = sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return max(own, cell_len(text))


def escaped(text: str) -> str:
    return inert(text).replace("\t", "\\t")


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("↩", "")


def run(args: list[str], columns: int) -> str:
    res = CliRunner().invoke(cli, args, env={"COLUMNS": str(columns)})
    assert res.exit_code == 0, res.output
    return res.stdout


def assert_fits(text: str, width: int) -> list[str]:
    lines = text.split("\n")
    assert lines[-1] == ""
    for line in lines[:-1]:
        assert display_width(line) <= width, f"{display_width(line)} cells at {width}: {line!r}\n{text}"
    assert not RAW.search(text), f"a raw control character: {text!r}"
    return lines[:-1]


def hostile_dir(root: Path) -> Path:
    """cpu, memory and device checkpoints whose pod UID and container name
    hold control characters, in a directory whose name holds an escape."""
    d = root / "st\x1b[2Jate"
    d.mkdir(parents=True)
    (d / "cpu_manager_state").write_text(json.dumps({
        "policyName": "static", "defaultCpuSet": "0,8-31",
        "entries": {UID: {CONTAINER: "4-5"}},
    }, ensure_ascii=False))  # fmt: skip
    state = {0: NUMANodeState(1, {"memory": MemoryTable(16 * GI, 0, 16 * GI, GI, 15 * GI)}, [0])}
    entries = {UID: {CONTAINER: [Block([0], "memory", GI)]}}
    (d / "memory_manager_state").write_bytes(
        encode_memory_checkpoint(MemoryCheckpointData("Static", state, entries))
    )
    plugins = d / "device-plugins"
    plugins.mkdir()
    entry = DeviceEntry(UID, CONTAINER, "example.com/g\x1bpu", {0: ("gpu\t0",)}, b"")
    (plugins / "kubelet_internal_checkpoint").write_bytes(
        encode_device_checkpoint([entry], {"example.com/g\x1bpu": ["gpu\t0"]})
    )
    return d


@pytest.mark.parametrize("width", [14, 20, 30, 45, 80, 200])
def test_control_characters_from_the_checkpoints_are_escaped_and_fit(tmp_path: Path, width: int) -> None:
    d = hostile_dir(tmp_path)
    text = run(["state", "inspect", str(d)], width)
    lines = assert_fits(text, width)
    squeezed = _squeezed(text)
    assert "x1b[2J" in squeezed and "x1b" in squeezed.split("nopodholds")[0].split("CPUs", 1)[-1]
    for part in ("\\x1b[2J", "\\x1b[31m", "\\x07", "\\t", "\\n", "\\x7f", "\\x85"):
        assert part in squeezed or width < 200, part
    # (the escapes are cut with a mark, never split raw: no line holds an ESC)
    assert all("\x1b" not in line for line in lines)


def test_control_characters_whole_at_a_wide_terminal(tmp_path: Path) -> None:
    d = hostile_dir(tmp_path)
    text = run(["state", "inspect", str(d)], 1000)
    assert_fits(text, 1000)
    assert escaped(UID) in text and escaped(CONTAINER) in text
    assert escaped(str(d)) in text
    assert "example.com/g\\x1bpu" in text and "gpu\\t0" in text
    # (one row per container: the name's line break makes no row of its own)
    assert sum(escaped(CONTAINER) in line for line in text.split("\n")) == 1


@pytest.mark.parametrize("width", range(12, 24))
def test_wide_characters_in_a_narrow_column_fit(tmp_path: Path, width: int) -> None:
    d = tmp_path / "s"
    d.mkdir()
    (d / "cpu_manager_state").write_text('{"entries":{"日本語日本語日本語":{"日本語日本語日本語":"4-5"}}}')
    text = run(["state", "inspect", str(d)], width)
    assert_fits(text, width)
    assert _squeezed(text).count("日") == 6 or "left out to fit" in text


@pytest.mark.parametrize("width", range(14, 19))
def test_short_lines_wrap_too(tmp_path: Path, width: int) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "cpu_manager_state").write_text('{"policyName":"none","defaultCpuSet":"","entries":{}}')
    text = run(["state", "inspect", str(empty)], width)
    assert_fits(text, width)
    assert "nopodholdsanassignment" in _squeezed(text) and _squeezed(text).endswith("noinconsistencies")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "cpu_manager_state").write_text(
        '{"policyName":"static","defaultCpuSet":"0,3-7","entries":{"a":{"x":"1-2"},"b":{"y":"2-3"}}}'
    )
    text = run(["state", "inspect", str(bad)], width)
    assert_fits(text, width)
    assert re.search(r"[0-9]inconsistencies:", _squeezed(text))


@pytest.mark.parametrize("width", range(14, 19))
def test_restart_without_pods_wraps_its_line(tmp_path: Path, width: int) -> None:
    doc = yaml.safe_load(RESTART.read_text())
    doc["steps"] = [s for s in doc["steps"] if "addPod" not in s]
    path = tmp_path / "nopods.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    text = run(["restart", str(path)], width)
    assert_fits(text, width)
    assert "nopodrunsonthenode" in _squeezed(text)


@pytest.mark.parametrize(("text", "width", "hang"), [
    ("aaaa bbbb cccc", 2, 2), ("aaaa bbbb cccc", 3, 2), ("日本語 日本語", 3, 2), ("日本語 日本語", 4, 4),
    ("x 日本語日本語", 5, 3),
])  # fmt: skip
def test_paragraph_never_wider_than_it_can_be(text: str, width: int, hang: int) -> None:
    lines = paragraph(text, width, hang=hang)
    assert all(cell_len(line) <= width for line in lines), lines
    assert _squeezed("".join(lines)) == _squeezed(text)


def _on_a_terminal(args: list[str], columns: str, rows: int, cols: int) -> str:
    """``podnuma ARGS`` on a pseudo-terminal ``cols`` wide, ``COLUMNS`` set."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "PYTHONPATH")}
    env |= {"COLUMNS": columns, "NO_COLOR": "1", "TERM": "dumb"}
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.Popen([sys.executable, "-c", "from podnuma.cli import run; run()", *args],
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 0, b"".join(chunks)
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux pseudo-terminal")
@pytest.mark.parametrize("columns", ["0", "-3", "wide"])
@pytest.mark.parametrize(("cols", "expect"), [(50, 50), (0, 120)])
def test_unusable_columns_on_a_terminal_is_the_terminals_width(
    tmp_path: Path, columns: str, cols: int, expect: int
) -> None:
    lines = _on_a_terminal(["restart", str(RESTART)], columns, 24, cols).split("\n")
    widest = max(display_width(line) for line in lines)
    assert expect - 30 < widest <= expect, (widest, lines)
    assert len(lines) < 60

"""Names with rich markup (``[/]``, ``[red]X``) and file names with
control characters go through every command's table output literally:
never read as markup (a crash on ``[/]``, ``[red]X`` shown as ``X``), the
control characters escaped (``fieldkit.inert``). The commands run through
the real command line (click's runner); the renderers are also driven
directly on a terminal console (markup and styles on)."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from podnuma.cli.app import cli
from podnuma.fieldkit import inert
from podnuma.machine.cpuset import CPUSet
from podnuma.render.podresources import cpu_list, render_allocatable, render_pods

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "examples" / "pod-level" / "tutorial-1-pod-scope-mixed.yaml"
NODE_NAMES = ["[/]X", "[red]X", "[red]X[/red]", "a[bold]b[/]c", "[link=http://e]x"]
COMMANDS = [
    ["simulate"],
    ["topology"],
    ["restart"],
    ["explain"],
    ["explain", "--no-search"],
]
RAW = "\x1b\x07\r\x00"


def _scenario(tmp_path: Path, node: str, file_part: str) -> Path:
    text = TUTORIAL.read_text(encoding="utf-8")
    assert "name: tutorial-node" in text
    quoted = node.replace("\\", "\\\\").replace('"', '\\"')
    path = tmp_path / file_part / f"s[/x]\x1b[31m\nfake{file_part}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("name: tutorial-node", f'name: "{quoted}"'), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("node", NODE_NAMES)
def test_names_and_file_names_are_shown_literally(tmp_path: Path, command: list[str], node: str) -> None:
    path = _scenario(tmp_path, node, "d[")
    r = CliRunner().invoke(cli, [command[0], str(path), *command[1:]])
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output
    assert node in r.stdout  # literally: not read as markup
    assert not any(c in r.stdout for c in RAW)
    if command[0] != "topology":  # (the machine picture names no file)
        assert inert(str(path)) in r.stdout or inert(path.name) in r.stdout


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=200, color_system="truecolor"), out


@pytest.mark.parametrize("text", ["p[/]x", "[red]x[/red]", "p\x1b]0;t\x07\x1b[31mR\nrow"])
def test_podresources_tables_are_literal_on_a_terminal(text: str) -> None:
    console, out = _terminal()
    pod = {"name": text, "namespace": text, "cpuIds": [], "memory": [],
           "containers": [{"name": text, "cpuIds": [3, 1, 2], "memory": [{"memoryType": text, "size": 1 << 30}],
                           "devices": [{"resourceName": text, "deviceIds": [text]}]}]}
    render_pods([pod], console)
    render_allocatable({"cpuIds": [0], "memory": [{"memoryType": text, "size": 1}],
                        "devices": [{"resourceName": text, "deviceIds": [text]}]}, console)
    shown = out.getvalue()
    assert shown.count(inert(text)) >= 7
    assert "\x1b]" not in shown and "\x07" not in shown and "\nrow" not in shown


def test_cpu_list_writes_what_cpuset_writes() -> None:
    rng = random.Random(5)
    assert cpu_list([]) == "-"
    for _ in range(300):
        ids = [rng.randrange(0, 70) for _ in range(rng.randrange(1, 40))]
        assert cpu_list(ids) == str(CPUSet(ids)), ids


def test_cpu_list_of_many_sparse_ids() -> None:
    ids = list(range(0, 2_000_000, 2))
    text = cpu_list(ids)
    assert text.startswith("0,2,4,") and text.endswith(",1999998")
    assert cpu_list([2**62, 2**62 + 1, 5]) == f"5,{2**62}-{2**62 + 1}"  # no bit mask built


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_bidi_controls_in_a_node_name_are_escaped(tmp_path: Path, command: list[str]) -> None:
    node = "a\u202eb\u2066c"  # (a node name may hold them: the kubelet takes them)
    path = _scenario(tmp_path, node, "bidi")
    r = CliRunner().invoke(cli, [command[0], str(path), *command[1:]])
    assert r.exit_code == 0, r.output
    assert "\u202e" not in r.stdout and "\u2066" not in r.stdout
    assert inert(node) in r.stdout


@pytest.mark.parametrize("value", ["c\x85x", "a\u2028b", "a\u2029", "é\x85\n"])
def test_yaml_keeps_the_line_breaks_yaml_would_fold(value: str) -> None:
    """U+0085, U+2028 and U+2029 in a single-quoted or plain scalar are
    folded into a space when read back: written double-quoted, escaped."""
    from podnuma.inputs.documents import parse_document
    from podnuma.render.yaml_text import dump_safe_yaml, dump_scenario_yaml, dump_yaml

    for dump in (dump_yaml, dump_safe_yaml, dump_scenario_yaml):
        text = dump({"name": value})
        assert parse_document(text, name="t.yaml").data == {"name": value}, (dump.__name__, text)

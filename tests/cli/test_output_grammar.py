"""One ``-o`` grammar: ``-o table`` and ``-o wide`` are every command's. A
command without a wider table takes ``wide`` as its ``table``; one whose
view for people has another name (``advise``: ``pods``; ``node discover``:
``yaml``) takes both as that view (they were usage errors in most
commands)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from podnuma.cli.app import cli
from podnuma.cli.options import OutputFormat

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples/pod-level/pod-scope-2-mixed.yaml")
POD = str(ROOT / "examples/whatif/trainer-pod.yaml")


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, (*path, name)))
        else:
            out.append(((*path, name), cmd))
    return out


def test_every_output_option_takes_table_and_wide() -> None:
    seen = 0
    for path, cmd in _commands(cli):
        for p in cmd.params:
            if isinstance(p, click.Option) and "-o" in p.opts and isinstance(p.type, OutputFormat):
                seen += 1
                choices = list(p.type.choices)
                assert "table" in choices and "wide" in choices, path
                people = p.type.aliases.get("table", "table")
                for word in ("table", "wide"):
                    got = p.type.convert(word, p, None)
                    assert got in ("table", "wide", people), (path, word, got)
    assert seen >= 12


def _run(*args: str, cwd: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("args", [
    ["explain", SCENARIO], ["topology", SCENARIO], ["compare", POD], ["advise", POD],
    ["cgroups", "plan", SCENARIO, "--driver", "systemd", "--cgroup-version", "2"], ["fleet", "analyze", str(ROOT / "examples/fleet")],
])
def test_wide_is_the_table_where_there_is_no_wider_one(args: list[str], tmp_path: Path) -> None:
    table = _run(*args, "-o", "table", cwd=tmp_path)
    wide = _run(*args, "-o", "wide", cwd=tmp_path)
    assert table[0] == 0 and table == wide
    if args[0] == "advise":  # (its view for people: the rewritten pods)
        assert _run(*args, cwd=tmp_path) == table


def test_state_inspect_takes_wide(tmp_path: Path) -> None:
    assert _run("simulate", SCENARIO, "--checkpoint-dir", "st", "-o", "json", cwd=tmp_path)[0] == 0
    table = _run("state", "inspect", "st", "-o", "table", cwd=tmp_path)
    assert table[0] == 0 and table == _run("state", "inspect", "st", "-o", "wide", cwd=tmp_path)


def test_quiet_after_the_command_s_words_too(tmp_path: Path) -> None:
    """``-q`` where kubectl takes its global flags: after the command's
    words as before them (``fleet generate ... -q`` was "No such option")."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for n, args in enumerate((["-q", "fleet", "generate"], ["fleet", "generate"], ["fleet", "generate"])):
        tail = ["-q"] if n == 2 else []
        proc = subprocess.run([sys.executable, "-m", "podnuma.cli", *args, "--nodes", "2", "--pods-per-node",
                               "2", "--output-dir", f"d{n}", *tail], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert (proc.stderr == "") is (n != 1), proc.stderr  # (the note, unless quiet)

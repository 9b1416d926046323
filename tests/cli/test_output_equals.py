"""``-o=FORMAT``: the short output option with an equals sign, as kubectl
(pflag) reads it.

click reads ``-o=json`` as ``-o`` with the value ``=json`` and refused it,
while ``-ojson``, ``-o json`` and ``--output=json`` worked; people coming
from kubectl type ``-o=json``. ``simulate`` is read by two parsers (the fast
path of :mod:`podnuma.cli.fast`, and click when the fast path leaves the
command line to it), so each is checked: the same bytes as ``-o json``, and
``-o=bogus`` still a usage error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.cli.fast import _parse

from ..scenario.helpers import base

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(base()), encoding="utf-8")
    return path


def _run(entry: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """``podnuma ARGS`` in a fresh interpreter through ``entry``:
    ``podnuma.cli`` (the fast path first) or ``podnuma.cli.app`` (click)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("_PODNUMA_COMPLETE", None)
    code = "import importlib, sys; sys.exit(importlib.import_module(sys.argv[1]).main(sys.argv[2:]))"
    return subprocess.run([sys.executable, "-c", code, entry, *args], capture_output=True,
                          timeout=180, cwd=cwd, env=env)


def test_the_fast_path_reads_o_equals() -> None:
    assert _parse(["simulate", "s.json", "-o=json"]) == _parse(["simulate", "s.json", "-o", "json"])
    assert _parse(["simulate", "-o=yaml", "s.json", "--detail"]) == _parse(
        ["simulate", "-o", "yaml", "s.json", "--detail"])
    # a value it does not know: left to click (and its message)
    assert _parse(["simulate", "s.json", "-o=bogus"]) is None
    assert _parse(["simulate", "s.json", "-o==json"]) is None
    # fleet analyze's -o is click's own Choice, which reads "=json" as the
    # value: the fast path must not read more than click does
    assert _parse(["fleet", "analyze", "d", "-o=json"]) is None


@pytest.mark.parametrize("fmt", ["json", "yaml", "wide"])
@pytest.mark.parametrize("entry", ["podnuma.cli", "podnuma.cli.app"])
def test_o_equals_gives_the_bytes_of_o_space(tmp_path: Path, scenario: Path, entry: str, fmt: str) -> None:
    spaced = _run(entry, ["simulate", str(scenario), "-o", fmt], tmp_path)
    assert spaced.returncode == 0, spaced.stderr
    equals = _run(entry, ["simulate", str(scenario), f"-o={fmt}"], tmp_path)
    assert (equals.stdout, equals.stderr, equals.returncode) == (
        spaced.stdout, spaced.stderr, spaced.returncode)


def test_o_equals_through_click_in_process(scenario: Path) -> None:
    runner = CliRunner()
    spaced = runner.invoke(cli, ["simulate", str(scenario), "-o", "json"])
    equals = runner.invoke(cli, ["simulate", str(scenario), "-o=json"])
    assert spaced.exit_code == 0, spaced.output
    assert (equals.exit_code, equals.output) == (0, spaced.output)


@pytest.mark.parametrize("entry", ["podnuma.cli", "podnuma.cli.app"])
def test_o_equals_bogus_is_a_usage_error(tmp_path: Path, scenario: Path, entry: str) -> None:
    proc = _run(entry, ["simulate", str(scenario), "-o=bogus"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert b"'-o'" in proc.stderr and b"bogus" in proc.stderr
    for value in ("=", "==json"):
        proc = _run(entry, ["simulate", str(scenario), f"-o={value}"], tmp_path)
        assert proc.returncode == 2 and proc.stdout == b""


def test_other_commands_sharing_the_option_read_o_equals(tmp_path: Path) -> None:
    runner = CliRunner()
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(base()), encoding="utf-8")
    spaced = runner.invoke(cli, ["explain", str(scenario), "-o", "json"])
    equals = runner.invoke(cli, ["explain", str(scenario), "-o=json"])
    assert spaced.exit_code == 0, spaced.output
    assert (equals.exit_code, equals.output) == (0, spaced.output)


def test_topology_and_fleet_read_o_equals(tmp_path: Path) -> None:
    """The commands with an -o of their own (topology, fleet analyze,
    fleet generate) read ``-o=FORMAT`` too, and still refuse ``-o=bogus``."""
    runner = CliRunner()
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(base()), encoding="utf-8")
    fleet = tmp_path / "fleet"
    made = runner.invoke(cli, ["fleet", "generate", "--nodes", "2", "--pods-per-node", "3",
                               "--output-dir", str(fleet), "-o=json"])
    assert made.exit_code == 0, made.output
    assert json.loads(made.output)["counts"]["nodes"] == 2
    for args in (["topology", str(scenario)], ["fleet", "analyze", str(fleet)]):
        spaced = runner.invoke(cli, [*args, "-o", "json"])
        equals = runner.invoke(cli, [*args, "-o=json"])
        assert spaced.exit_code == 0, spaced.output
        assert (equals.exit_code, equals.output) == (0, spaced.output)
        bogus = runner.invoke(cli, [*args, "-o=bogus"])
        assert bogus.exit_code == 2 and "'=bogus'" in bogus.output

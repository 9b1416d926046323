"""A file an option names for the command to write (``--as-scenario``,
``--output-file``) in a directory that does not exist is refused in one
wording by every command, before any work: ``error: PATH: OPTION: cannot
write: its directory does not exist``, exit 2, nothing on standard output
(the system's ``No such file or directory`` names no culprit: the file is
meant to be created). The words come from one function
(:func:`podnuma.inputs.pathcheck.cannot_write`), which a write failing
after the work uses too."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.inputs.pathcheck import MISSING_DIRECTORY, cannot_write, write_problem

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "pod-level" / "restart.yaml")
TRAINER = str(ROOT / "examples" / "whatif" / "trainer-pod.yaml")
FLEET = str(ROOT / "examples" / "fleet")

COMMANDS = [
    (["simulate", SCENARIO], "--as-scenario", "x.yaml"),
    (["explain", SCENARIO], "--as-scenario", "x.yaml"),
    (["restart", SCENARIO], "--as-scenario", "x.yaml"),
    (["advise", TRAINER], "--as-scenario", "x.yaml"),
    (["topology", SCENARIO], "--output-file", "x.svg"),
    (["fleet", "analyze", FLEET], "--output-file", "x.json"),
]


@pytest.mark.parametrize(("args", "option", "name"), COMMANDS, ids=lambda v: v[0] if isinstance(v, list) else None)
def test_every_command_tells_a_missing_directory_in_the_same_words(
    tmp_path: Path, args: list[str], option: str, name: str
) -> None:
    target = tmp_path / "nowhere" / name
    r = CliRunner().invoke(cli, [*args, option, str(target)])
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr == f"error: {target}: {option}: cannot write: its directory does not exist\n"
    assert not (tmp_path / "nowhere").exists()


def test_the_fast_path_of_fleet_analyze_says_it_too(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "r.json"
    run = "import sys; from podnuma.cli import main; sys.exit(main(sys.argv[1:], own_process=True))"
    proc = subprocess.run([sys.executable, "-c", run, "fleet", "analyze", FLEET, "-o", "json", "--output-file",
                           str(target)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"error: {target}: --output-file: cannot write: its directory does not exist\n"


def test_a_name_ending_as_a_directory_in_a_missing_directory_is_told_alike(tmp_path: Path) -> None:
    name = f"{tmp_path / 'nowhere' / 'r.yaml'}/"
    r = CliRunner().invoke(cli, ["simulate", SCENARIO, "--as-scenario", name])
    assert r.exit_code == 2
    assert r.stderr == f"error: {name}: --as-scenario: cannot write: its directory does not exist\n"


def test_a_write_failing_after_the_work_is_told_in_the_same_words(tmp_path: Path) -> None:
    """The directory removed between the check and the write: the failing
    write's ``ENOENT`` is said as the check says it; in a directory that
    exists (``/proc``, where no file can be made) it is the system's."""
    gone = tmp_path / "gone" / "x.yaml"
    e = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(gone))
    assert write_problem(gone, e) == MISSING_DIRECTORY
    err = cannot_write("--as-scenario", gone, e)
    assert (err.file, err.message) == (str(gone), "--as-scenario: cannot write: its directory does not exist")
    assert write_problem(tmp_path / "x.yaml", e) == os.strerror(errno.ENOENT)
    assert cannot_write(None, gone, "Is a directory").message == "cannot write: Is a directory"

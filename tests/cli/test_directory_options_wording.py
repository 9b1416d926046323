"""One wording for every option that names a directory (and ``fleet
analyze``'s inputs, a file or a directory): ``error: PATH: OPTION:
PROBLEM``, one line on standard error, nothing on standard output, exit 2
(:mod:`podnuma.inputs.pathcheck`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.inputs.pathcheck import path_problem

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "static-dual-socket.yaml")
FLEET = str(ROOT / "examples" / "fleet")

#: the option, the command line naming the path ``{x}`` (``{d}``: a
#: directory that is fine), and whether the path must exist (else the
#: command creates it)
OPTIONS: list[tuple[str, list[str], bool]] = [
    ("DIRECTORY", ["state", "inspect", "{x}"], True),
    ("--sysfs", ["state", "inspect", "{d}", "--sysfs", "{x}"], True),
    ("--sysfs", ["node", "discover", "--sysfs", "{x}"], True),
    ("--state-dir", ["restart", "--state-dir", "{x}"], True),
    ("--sysfs", ["restart", "--state-dir", "{d}", "--sysfs", "{x}"], True),
    ("--manifests", ["agent", "--manifests", "{x}", "--state-dir", "{d}"], True),
    ("--state-dir", ["agent", "--manifests", "{d}", "--state-dir", "{x}"], False),
    ("--cgroup-root", ["agent", "--manifests", "{d}", "--state-dir", "{d}", "--cgroup-root", "{x}"], True),
    ("--checkpoint-dir", ["simulate", SCENARIO, "--checkpoint-dir", "{x}"], False),
    ("--checkpoint-dir", ["demo", "--checkpoint-dir", "{x}"], False),
    ("--root", ["cgroups", "apply", SCENARIO, "--driver", "cgroupfs", "--cgroup-version", "2",
                "--root", "{x}"], True),
    ("--output-dir", ["fleet", "generate", "--nodes", "1", "--pods-per-node", "1", "--output-dir", "{x}"],
     False),
    ("--as-scenario", ["fleet", "analyze", FLEET, "--as-scenario", "{x}"], False),
]

ENOTDIR = "cannot reach it: Not a directory (a file on the way, where a directory should be)"
ELOOP = "cannot reach it: Too many levels of symbolic links"

#: the kind of path, and what is said of it
CASES = {
    "file": "not a directory (a regular file)",
    "missing": "no such directory",
    "under-a-file": ENOTDIR,
    "link-loop": ELOOP,
    "dangling-link": "no such directory (a symbolic link to nothing)",
}


def _path(tmp_path: Path, case: str) -> Path:
    afile = tmp_path / "afile"
    afile.write_text("")
    if case == "file":
        return afile
    if case == "missing":
        return tmp_path / "missing" / "dir"
    if case == "under-a-file":
        return afile / "sub"
    if case == "link-loop":
        (tmp_path / "loop1").symlink_to("loop2")
        (tmp_path / "loop2").symlink_to("loop1")
        return tmp_path / "loop1"
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    return tmp_path / "dangling"


def _invoke(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, args, prog_name="podnuma")
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("option", "line", "must_exist"), OPTIONS,
                         ids=[" ".join(w for w in line if not w.startswith(("{", "/")))
                              for _, line, _ in OPTIONS])
def test_one_wording(tmp_path: Path, option: str, line: list[str], must_exist: bool, case: str) -> None:
    if case == "missing" and not must_exist:
        pytest.skip("a directory the command creates")
    x = _path(tmp_path, case)
    d = tmp_path / "d"
    d.mkdir()
    args = [w.replace("{x}", str(x)).replace("{d}", str(d)) for w in line]
    assert _invoke(args) == (2, "", f"error: {x}: {option}: {CASES[case]}\n")
    assert not (tmp_path / "missing").exists()  # (nothing made)


@pytest.mark.parametrize(("case", "problem"), [
    ("missing", "no such file or directory"),
    ("under-a-file", ENOTDIR),
    ("link-loop", ELOOP),
    ("dangling-link", "no such file or directory (a symbolic link to nothing)"),
])
def test_fleet_analyze_inputs(tmp_path: Path, case: str, problem: str) -> None:
    """An input is a file or a directory: a file is read (not refused), the
    rest said as every directory option says it, by click and by the fast
    path alike."""
    x = _path(tmp_path, case)
    want = (2, "", f"error: {x}: INPUT: {problem}\n")
    assert _invoke(["fleet", "analyze", FLEET, str(x)]) == want
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(x), "-o", "json"],
                       capture_output=True, text=True, env=env, check=False)
    assert (r.returncode, r.stdout, r.stderr) == want


def test_directories_created_are_accepted_missing(tmp_path: Path) -> None:
    out = tmp_path / "new" / "ckpt"
    code, _, err = _invoke(["simulate", SCENARIO, "-o", "json", "--checkpoint-dir", str(out)])
    assert code == 0, err
    assert (out / "cpu_manager_state").is_file()
    gen = tmp_path / "gen"
    code, _, err = _invoke(["fleet", "generate", "--nodes", "1", "--pods-per-node", "1", "--output-dir", str(gen)])
    assert code == 0, err
    assert gen.is_dir()


def test_other_kinds_of_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert path_problem(fifo) == "not a directory (a named pipe)"
    assert path_problem(os.devnull) == "not a directory (a character device)"
    assert path_problem(fifo, file_okay=True) is None
    assert path_problem(tmp_path / "new", must_exist=False) is None
    assert path_problem(tmp_path) is None


def test_a_directory_that_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(Root reads every directory: the refusal of ``access(2)`` faked.)"""
    monkeypatch.setattr(os, "access", lambda *_a, **_k: False)
    assert path_problem(tmp_path) == "cannot read: Permission denied"
    assert _invoke(["state", "inspect", str(tmp_path)]) == (
        2, "", f"error: {tmp_path}: DIRECTORY: cannot read: Permission denied\n")


def test_restart_scenario_and_state_dir_both_given(tmp_path: Path) -> None:
    """A missing --state-dir is said as such; a state directory that is
    there beside a SCENARIO: both given, not 'give one of them' alone."""
    missing = tmp_path / "missing"
    assert _invoke(["restart", SCENARIO, "--state-dir", str(missing)]) == (
        2, "", f"error: {missing}: --state-dir: no such directory\n")
    code, out, err = _invoke(["restart", SCENARIO, "--state-dir", str(tmp_path)])
    assert (code, out) == (2, "")
    assert err == ("error: SCENARIO and --state-dir DIR both given: give one of them (a scenario to run, "
                   "or the state directory of a node) (see 'podnuma restart --help')\n")
    code, out, err = _invoke(["restart"])
    assert (code, out, err) == (
        2, "", "error: give a SCENARIO or --state-dir DIR (one of them) (see 'podnuma restart --help')\n")

"""One wording for every option that names a directory (and ``fleet
analyze``'s inputs, a file or a directory): ``error: PATH: OPTION:
PROBLEM``, one line on standard error, nothing on standard output, exit 2
(:mod:`podnuma.inputs.pathcheck`)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import click
import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.cli.options import PathRefused
from podnuma.errors import InputError
from podnuma.inputs.pathcheck import DASH_DIRECTORY, path_problem

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
UNDER_DANGLING = "cannot reach it: No such file or directory (a symbolic link to nothing on the way: {link})"
EACCES = "cannot read: Permission denied"

#: the kind of path, and what is said of it
CASES = {
    "file": "not a directory (a regular file)",
    "file-slash": "not a directory (a regular file)",
    "missing": "no such directory",
    "under-a-file": ENOTDIR,
    "link-loop": ELOOP,
    "dangling-link": "no such directory (a symbolic link to nothing)",
    "dangling-link-slash": "no such directory (a symbolic link to nothing)",
    "under-a-dangling-link": UNDER_DANGLING,
    "dash": DASH_DIRECTORY,
    "unreadable": EACCES,
}

#: what ``agent --manifests`` takes as the kubelet's ``staticPodPath``
#: does: one file, or a path that does not exist (yet), or is behind a file
#: (read once made)
MANIFESTS_TAKEN = {"file", "file-slash", "missing", "dangling-link", "dangling-link-slash", "under-a-dangling-link",
                   "under-a-file"}

#: a directory even root cannot list (in a container without ptrace
#: rights), when this system has one
UNREADABLE = "/proc/1/map_files"


def _unreadable_here(path: str = UNREADABLE) -> bool:
    try:
        with os.scandir(path) as entries:
            next(entries, None)
    except PermissionError:
        return True
    except OSError:
        return False
    return False


def _path(tmp_path: Path, case: str) -> Path:
    afile = tmp_path / "afile"
    afile.write_text("")
    if case == "file":
        return afile
    if case == "file-slash":  # (the file itself: a trailing slash changes nothing)
        return Path(f"{afile}/")
    if case == "dash":
        return Path("-")
    if case == "unreadable":
        if not _unreadable_here():
            pytest.skip(f"{UNREADABLE} can be read here")
        return Path(UNREADABLE)
    if case == "under-a-dangling-link":
        (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
        return tmp_path / "dangling" / "sub"
    if case == "dangling-link-slash":
        (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
        return Path(f"{tmp_path / 'dangling'}/")
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


def _param(line: list[str], option: str) -> click.Parameter:
    """The click parameter ``option`` (an argument: its metavar) of the
    command ``line`` names."""
    command: click.Command | None = cli
    for word in line:
        if not isinstance(command, click.Group):
            break
        found = command.get_command(click.Context(command), word)
        if found is None:
            break
        command = found
    assert command is not None
    for p in command.params:
        if isinstance(p, click.Option) and option in p.opts:
            return p
        if isinstance(p, click.Argument) and option in (p.human_readable_name, (p.name or "").upper()):
            return p
    raise AssertionError(f"{option} not in {line}")


def _problem(case: str, x: Path, must_exist: bool) -> str:
    if case == "under-a-dangling-link":
        if must_exist:  # (a directory read: not there, whatever the way)
            return "no such directory"
        return UNDER_DANGLING.format(link=x.parent)
    return CASES[case]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("option", "line", "must_exist"), OPTIONS,
                         ids=[" ".join(w for w in line if not w.startswith(("{", "/")))
                              for _, line, _ in OPTIONS])
def test_one_wording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str, line: list[str],
                     must_exist: bool, case: str) -> None:
    if case == "missing" and not must_exist:
        pytest.skip("a directory the command creates")
    if option == "--manifests" and case in MANIFESTS_TAKEN:
        pytest.skip("a static-pod path may be one file or not exist yet (tests/agent/test_static_pod_path_kinds.py)")
    monkeypatch.chdir(tmp_path)  # (a directory named '-' would be made here)
    x = _path(tmp_path, case)
    d = tmp_path / "d"
    d.mkdir()
    shown = f"{x}/" if case in ("file-slash", "dangling-link-slash") else str(x)  # (as given)
    want = f"{shown}: {option}: {_problem(case, x, must_exist)}"
    args = [w.replace("{x}", shown).replace("{d}", str(d)) for w in line]
    assert _invoke(args) == (2, "", f"error: {want}\n")
    assert not (tmp_path / "missing").exists()  # (nothing made)
    assert not (tmp_path / "-").exists()
    assert not (tmp_path / "nowhere").exists()
    # said as the option is read (the service's own check of the path,
    # later, says the same words: the option's type must say them first)
    param = _param(line, option)
    with pytest.raises(PathRefused) as refused:
        param.type.convert(shown, param, None)
    assert refused.value.format_message() == want


#: runs ``podnuma ARGS`` as the console script does, then says on standard
#: error, last, whether click was loaded (the fast path never loads it)
PROBE = """
import sys
from podnuma.cli import main
try:
    code = main(sys.argv[1:], own_process=True)
finally:
    sys.stdout.flush()
    sys.stderr.write("\\nCLICK " + str(any(m == "click" or m.startswith("click.") for m in sys.modules)) + "\\n")
sys.exit(code)
"""


def _fast(args: list[str]) -> tuple[int, str, str]:
    """``podnuma ARGS`` in a process of its own, asserting the fast path
    (no click) took it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env,
                       check=False, timeout=180)
    err, _, loaded = r.stderr.rpartition("\nCLICK ")
    assert loaded.strip() == "False", r.stderr  # (the fast path: click never loaded)
    return r.returncode, r.stdout, err


@pytest.mark.parametrize(("case", "problem"), [
    ("missing", "no such file or directory"),
    ("under-a-file", ENOTDIR),
    ("link-loop", ELOOP),
    ("dangling-link", "no such file or directory (a symbolic link to nothing)"),
    ("file-slash", "not a directory (a regular file)"),  # (a file is an input, 'afile/' is not)
    ("unreadable", EACCES),
])
def test_fleet_analyze_inputs(tmp_path: Path, case: str, problem: str) -> None:
    """An input is a file or a directory: a file is read (not refused), the
    rest said as every directory option says it, by click and by the fast
    path alike."""
    x = _path(tmp_path, case)
    shown = f"{x}/" if case == "file-slash" else str(x)
    want = (2, "", f"error: {shown}: INPUT: {problem}\n")
    assert _invoke(["fleet", "analyze", FLEET, shown]) == want
    assert _fast(["fleet", "analyze", shown, "-o", "json"]) == want


def test_an_input_directory_that_cannot_be_read_inside_one(tmp_path: Path) -> None:
    """A link inside an input directory to a directory outside it (here
    one that cannot be listed): not followed, a warning naming it, the
    rest read; not an internal error (docs/fleet.md)."""
    dumps = tmp_path / "dumps"
    shutil.copytree(FLEET, dumps)
    (dumps / "more").mkdir()
    (dumps / "more" / "fd").symlink_to("/proc/1/fdinfo")
    for run in (_invoke, _fast):
        code, out, err = run(["fleet", "analyze", str(dumps), "-o", "json"])
        assert code == 0, err
        issues = [i for i in json.loads(out)["issues"] if i.get("file") == str(dumps / "more" / "fd")]
        assert [(i["severity"], i["message"]) for i in issues] == [
            ("warning", "a link to a directory outside the input directory: skipped (not followed; give that "
                        "directory as an input to read it)")]


def test_fleet_analyze_names_its_inputs_as_its_usage_does(tmp_path: Path) -> None:
    code, out, _ = _invoke(["fleet", "analyze", "--help"])
    assert code == 0 and "Usage: podnuma fleet analyze [OPTIONS] [INPUT]..." in out
    want = (2, "", "error: '': INPUT: no such file or directory\n")
    assert _invoke(["fleet", "analyze", ""]) == want
    assert _fast(["fleet", "analyze", "", "-o", "json"]) == want


def test_fleet_analyze_output_file_a_directory(tmp_path: Path) -> None:
    want = (2, "", f"error: {tmp_path}: --output-file: cannot write: Is a directory\n")
    assert _invoke(["fleet", "analyze", FLEET, "--output-file", str(tmp_path)]) == want
    assert _fast(["fleet", "analyze", FLEET, "-o", "json", "--output-file", str(tmp_path)]) == want
    assert _invoke(["topology", SCENARIO, "--output-file", str(tmp_path)]) == (
        2, "", f"error: {tmp_path}: --output-file: cannot write: Is a directory\n")


def test_not_empty(tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("")
    assert _invoke(["fleet", "generate", "--nodes", "1", "--pods-per-node", "1", "--output-dir", str(full)]) == (
        2, "", f"error: {full}: --output-dir: not empty (the fleet goes into a new or empty directory: "
        "all or nothing is written)\n")
    assert _invoke(["fleet", "analyze", FLEET, "-o", "json", "--as-scenario", str(full)]) == (
        2, "", f"error: {full}: --as-scenario: not empty (the scenarios go into a new or empty directory)\n")


def test_service_checks_say_it_the_same_way(tmp_path: Path) -> None:
    """The service's own checks (a path changed since the options were
    read, or another caller): the same words, naming the option."""
    from podnuma.agent.state import StateDir
    from podnuma.fileio import write_checkpoint_dir
    from podnuma.service import fleet as service

    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    x = tmp_path / "dangling" / "sub"
    problem = UNDER_DANGLING.format(link=tmp_path / "dangling")
    for option, call in [
        ("--as-scenario", lambda: service.scenario_dir_unused(x)),
        ("--as-scenario", lambda: service.prepare_scenario_dir(cast(Any, SimpleNamespace(nodes=())), [], x)),
        ("--checkpoint-dir", lambda: write_checkpoint_dir(x, {})),
        ("--output-dir", lambda: service.generate(x, nodes=1, pods_per_node=1)),
        ("--state-dir", lambda: StateDir(x).prepare()),
    ]:
        with pytest.raises(InputError) as e:
            call()
        assert str(e.value) == f"{x}: {option}: {problem}"
    assert not (tmp_path / "nowhere").exists()


def test_the_agent_names_its_cgroup_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``apply_plan`` is shared by ``cgroups apply --root`` and the agent's
    ``--cgroup-root``: each names its own option."""
    from podnuma.agent.cgroups import CgroupTree
    from podnuma.cgroups import apply_plan

    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(InputError, match=r": --root: not a directory"):
        apply_plan(cast(Any, None), afile)
    tree = CgroupTree(afile, "cgroupfs", 2)
    monkeypatch.setattr(tree, "_plan", lambda *_a: None)
    with pytest.raises(InputError) as e:
        tree.sync(cast(Any, None), {}, ())
    assert str(e.value) == f"{afile}: --cgroup-root: not a directory (a regular file)"


def test_the_last_link_that_cannot_be_followed_is_not_a_directory_on_the_way() -> None:
    try:
        os.stat("/proc/1/cwd")
    except PermissionError:
        pass
    else:
        pytest.skip("/proc/1/cwd can be followed here")
    assert path_problem("/proc/1/cwd") == (
        "cannot reach it: Permission denied (a symbolic link that cannot be followed)")


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
    """A directory is listed to know whether it can be read (root lists
    every directory: the refusal of the listing faked); ``access(2)`` is
    not asked (it answers for the real user, without the process's
    capabilities: it refuses what a capable process lists)."""
    real = os.scandir

    def refused(path: Any) -> Any:
        if os.fspath(path) == str(tmp_path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "access", lambda *_a, **_k: False)
    assert path_problem(tmp_path) is None
    monkeypatch.setattr(os, "scandir", refused)
    assert path_problem(tmp_path) == "cannot read: Permission denied"
    assert path_problem(f"{tmp_path}/.") == "cannot read: Permission denied"
    assert _invoke(["state", "inspect", str(tmp_path)]) == (
        2, "", f"error: {tmp_path}: DIRECTORY: cannot read: Permission denied\n")


def test_a_file_named_with_slash_dot_is_the_file(tmp_path: Path) -> None:
    """``afile/.`` (as ``afile/``) names the file itself: not a file on the way."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    for given in (f"{afile}/", f"{afile}/.", f"{afile}/./", f"{afile}//.//"):
        assert path_problem(given) == "not a directory (a regular file)", given
    assert path_problem(f"{afile}/x") == (
        "cannot reach it: Not a directory (a file on the way, where a directory should be)")


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

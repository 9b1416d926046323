"""A file named with a trailing ``/`` (``r.json/``, ``r.json/.``) names a
directory, as the system reads it: written, it is refused as the system
refuses to make a file there (``cannot write: Is a directory``, ``Not a
directory`` where a file is) before any work; read, in the system's words
(``Not a directory``). :mod:`pathlib` drops the ending (``Path("r.json/")``
is ``r.json``): before, every writer wrote ``r.json`` and every reader read
it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.cli.fast import _parse
from podnuma.fileio import atomic_write, file_name_errno
from podnuma.inputs.pathtext import names_directory, open_text, path_text

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "static-dual-socket.yaml")
FLEET = str(ROOT / "examples" / "fleet")
WHATIF = ROOT / "examples" / "whatif"
ADVISE = [str(WHATIF / "trainer-pod.yaml"), "--node", str(WHATIF / "node.yaml"),
          "--kubelet-config", str(WHATIF / "kubelet-config.yaml")]

#: (option, command line with ``{x}`` for the file written)
WRITERS: list[tuple[str, list[str]]] = [
    ("--output-file", ["topology", SCENARIO, "--output-file", "{x}"]),
    ("--output-file", ["fleet", "analyze", FLEET, "-o", "json", "--output-file", "{x}"]),
    ("--as-scenario", ["simulate", SCENARIO, "--as-scenario", "{x}"]),
    ("--as-scenario", ["explain", SCENARIO, "--as-scenario", "{x}"]),
    ("--as-scenario", ["restart", SCENARIO, "--as-scenario", "{x}"]),
    ("--as-scenario", ["advise", *ADVISE, "--as-scenario", "{x}"]),
]


#: the console script's entry point, in a process of its own
RUN = "import sys; from podnuma.cli import main; sys.exit(main(sys.argv[1:], own_process=True))"


def _tree(root: Path) -> list[tuple[str, bool]]:
    return sorted((str(p.relative_to(root)), p.is_dir()) for p in root.rglob("*"))


@pytest.mark.parametrize(("option", "argv"), WRITERS, ids=lambda v: v if isinstance(v, str) else " ".join(v[:2]))
@pytest.mark.parametrize(("kind", "ending", "problem"), [
    ("missing", "/", "Is a directory"),
    ("missing", "/.", "Is a directory"),
    ("file", "/", "Not a directory"),
    ("directory", "/", "Is a directory"),
])
def test_a_file_written_under_a_directory_name_is_refused_before_any_work(
    tmp_path: Path, option: str, argv: list[str], kind: str, ending: str, problem: str
) -> None:
    target = tmp_path / "r.json"
    if kind == "file":
        target.write_text("kept\n")
    elif kind == "directory":
        target.mkdir()
    before = _tree(tmp_path)
    name = f"{target}{ending}"
    r = CliRunner().invoke(cli, [a.replace("{x}", name) for a in argv])
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr == f"error: {name}: {option}: cannot write: {problem}\n"
    assert _tree(tmp_path) == before
    if kind == "file":
        assert target.read_text() == "kept\n"


def test_the_fast_path_of_fleet_analyze_says_it_in_the_same_words(tmp_path: Path) -> None:
    # (``fleet analyze INPUT --output-file FILE`` runs without click: a
    # directory's name is left to click, whose option refuses it)
    name = f"{tmp_path / 'r.json'}/"
    args = ["fleet", "analyze", FLEET, "-o", "json", "--output-file", name]
    # (left to click, which the fast path would otherwise skip)
    assert _parse(args) is None
    assert _parse([*args[:-1], name.rstrip("/")]) is not None
    r = subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr == f"error: {name}: --output-file: cannot write: Is a directory\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("ending", ["/", "/."])
def test_a_file_read_under_a_directory_name_is_refused_in_the_systems_words(ending: str) -> None:
    r = CliRunner().invoke(cli, ["simulate", SCENARIO + ending, "-o", "json"])
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == f"error: {SCENARIO}{ending}: cannot read scenario file: Not a directory\n"
    node = str(WHATIF / "node.yaml") + ending
    r = CliRunner().invoke(cli, ["advise", str(WHATIF / "trainer-pod.yaml"), "--node", node,
                                 "--kubelet-config", str(WHATIF / "kubelet-config.yaml")])
    assert r.exit_code == 2
    assert r.stderr == f"error: {node}: cannot read node file: Not a directory\n"


def test_a_file_option_taken_as_a_path_is_refused_too(tmp_path: Path) -> None:
    name = f"{tmp_path / 'kubelet.sock'}/"
    r = CliRunner().invoke(cli, ["podresources", "list", "--socket", name])
    assert r.exit_code == 2
    assert r.stderr == f"error: {name}: --socket: No such file or directory\n"


@pytest.mark.parametrize(("kind", "code"), [
    ("missing", errno.EISDIR), ("file", errno.ENOTDIR), ("directory", errno.EISDIR),
])
def test_atomic_write_refuses_a_directory_name_and_makes_nothing(tmp_path: Path, kind: str, code: int) -> None:
    target = tmp_path / "r.json"
    if kind == "file":
        target.write_bytes(b"kept")
    elif kind == "directory":
        target.mkdir()
    before = _tree(tmp_path)
    for name in (f"{target}/", f"{target}/."):
        assert file_name_errno(name) == code
        with pytest.raises(OSError) as e:
            atomic_write(name, b"new")
        assert e.value.errno == code
        assert _tree(tmp_path) == before
    if kind == "file":
        assert target.read_bytes() == b"kept"
    # the same name without the ending is written as before
    if kind != "directory":
        atomic_write(str(target), b"new")
        assert target.read_bytes() == b"new"
        assert file_name_errno(str(target)) is None


@pytest.mark.parametrize("text", [
    "f", "f/", "f/.", "f/./", "f//", "a/b/", "a/b/.", "/", "//", "///", "/.", ".", "./", "..", "../",
    "a/..", "a/../", "/a/", "//a/", "a/./b", "",
])
def test_names_directory_and_open_text_against_pathlib_and_the_system(text: str) -> None:
    pure = str(PurePosixPath(text))
    assert path_text(text) == pure
    ends = text.endswith(("/", "/.")) and not pure.endswith("/")
    assert names_directory(text) is ends
    assert open_text(text) == (pure + "/" if ends else pure)
    # what the system makes of the name opened is what it makes of the text
    # as given: both refuse a regular file there
    if text and not text.startswith("/"):
        assert os.path.normpath(open_text(text)) == os.path.normpath(text)

"""``fleet analyze`` given a path that names one of the command's own
descriptors (``/dev/stdin``, ``/dev/fd/N``, ``/proc/self/fd/N``,
``/proc/PID/fd/N``, a link to one): what it opens depends on the process
(a ``--workers`` process's or a Dask worker's standard input is
``/dev/null``), so the command copies it first, as it copies ``-``, and
one process, ``--workers 2`` and ``--dask local:2`` read the same bytes:
the same report, with standard input a pipe or a file (``< pods.json``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from podnuma.cli import fleet_analyze
from podnuma.fleet.generate import generate_fleet

from .conftest import need

MODES: list[list[str]] = [[], ["--workers", "2"], ["--dask", "local:2"]]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.fixture(scope="module")
def split_fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """A fleet without its pods (a directory), its pods in one dump beside
    it, and how many pods the dump holds."""
    root = tmp_path_factory.mktemp("stdin")
    generate_fleet(root / "gen", nodes=6, pods_per_node=8, seed=11, nodes_per_pods_file=0)
    pods = root / "pods.json"
    shutil.move(str(root / "gen" / "pods" / "pods.json"), pods)
    (root / "gen" / "pods").rmdir()
    return root / "gen", pods, len(json.loads(pods.read_text())["items"])


def _analyze(args: list[str], stdin: Any, cwd: Path) -> tuple[int, bytes, bytes]:
    """The command in a process of its own; ``stdin``: bytes (a real pipe)
    or an open file (the shell's ``< FILE``)."""
    argv = [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", *args]
    if isinstance(stdin, bytes):
        p = subprocess.run(argv, input=stdin, cwd=cwd, env=_env(), capture_output=True, timeout=600)
    else:
        p = subprocess.run(argv, stdin=stdin, cwd=cwd, env=_env(), capture_output=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("how", ["pipe", "file"])
@pytest.mark.parametrize("path", ["/dev/stdin", "/proc/self/fd/0"])
def test_every_mode_reads_the_same_standard_input(
    split_fleet: tuple[Path, Path, int], tmp_path: Path, how: str, path: str,
) -> None:
    """The review's case: ``fleet analyze DIR /dev/stdin --dask local:2 <
    pods.json`` said every node's pods "changed since it was indexed" and
    replayed none (the Dask workers reopened their own standard input,
    ``/dev/null``); one process and ``--workers 2`` replayed them all."""
    need("distributed")
    fleet, pods, count = split_fleet
    reports: list[tuple[int, bytes, bytes]] = []
    for mode in MODES:
        if how == "pipe":
            reports.append(_analyze([str(fleet), path, "-o", "json", *mode], pods.read_bytes(), tmp_path))
        else:
            with pods.open("rb") as fh:
                reports.append(_analyze([str(fleet), path, "-o", "json", *mode], fh, tmp_path))
    code, out, err = reports[0]
    assert code == 0, err
    assert b"changed since it was indexed" not in err, err
    doc = json.loads(out)
    assert doc["fleet"]["podsInDumps"] == count
    assert doc["fleet"]["podsReplayed"] > 0
    assert [i for i in doc["issues"] if i.get("file") == path] == []
    for mode, got in zip(MODES[1:], reports[1:], strict=True):
        assert got == reports[0], mode


def test_a_descriptor_other_than_standard_input_and_a_link_to_one(
    split_fleet: tuple[Path, Path, int], tmp_path: Path,
) -> None:
    """``/dev/fd/N`` of a descriptor the command inherits (a shell's
    ``N< FILE``), and a link to ``/dev/stdin``: copied too, the same
    report in every mode, named as given."""
    need("distributed")
    fleet, pods, count = split_fleet
    (tmp_path / "link").symlink_to("/dev/stdin")
    for path, line in [("/dev/fd/7", f"7< {pods}"), ("link", f"< {pods}")]:
        got = []
        for mode in MODES:
            p = subprocess.run(
                ["bash", "-c", f"exec {sys.executable} -m podnuma.cli fleet analyze {fleet} {path} "
                               f"-o json {' '.join(mode)} {line}"],
                cwd=tmp_path, env=_env(), capture_output=True, timeout=600)
            assert p.returncode == 0, p.stderr
            got.append((p.stdout, p.stderr))
        assert json.loads(got[0][0])["fleet"]["podsInDumps"] == count, path
        assert b"changed since it was indexed" not in got[0][1]
        assert got[1] == got[0] and got[2] == got[0], path


def test_an_empty_standard_input_is_the_same_error_in_every_mode(
    split_fleet: tuple[Path, Path, int], tmp_path: Path,
) -> None:
    """``/dev/stdin`` on ``/dev/null`` (a device): copied as well (empty:
    the error naming ``/dev/stdin``), not read as whatever the workers'
    standard input is."""
    fleet, _, _ = split_fleet
    got = []
    for mode in MODES[:2]:
        with open(os.devnull, "rb") as fh:
            got.append(_analyze([str(fleet), "/dev/stdin", "-o", "json", *mode], fh, tmp_path))
    assert got[0][0] == 0
    assert b"error: /dev/stdin: empty file: no Kubernetes objects" in got[0][2]
    assert got[1] == got[0]


def test_which_paths_name_a_descriptor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule: the path, followed link by link, goes through a directory
    of this process's descriptors (``/dev/fd``, ``/proc/PID/fd`` of its own
    PID or a thread's); a file is read where the replay runs, by its path,
    as before."""
    names = fleet_analyze._names_descriptor
    pid = os.getpid()
    for p in ("/dev/stdin", "/dev/stderr", "/dev/fd/0", "/proc/self/fd/0", f"/proc/{pid}/fd/0",
              "/proc/thread-self/fd/1", f"/proc/{pid}/task/{pid}/fd/2", "/dev/fd/99",
              "/dev/../dev/./stdin", "/proc/self/fd/0/x"):
        assert names(p), p
    (tmp_path / "in").symlink_to("/dev/stdin")
    (tmp_path / "fds").symlink_to(f"/proc/{pid}/fd")
    (tmp_path / "f.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    assert names("in") and names(str(tmp_path / "in")) and names("fds/0")
    for p in ("f.json", str(tmp_path / "f.json"), "missing", "/dev/null", "/proc/self/fd", "/dev/fd",
              "/proc/self/status", "/", "/dev/./fd/../stdin"):
        assert not names(p), p
    if pid != 1:
        assert not names("/proc/1/fd/0")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert not names("loop/x")


def test_what_is_copied(tmp_path: Path) -> None:
    """:func:`_copied`: a pipe, or what a descriptor's path is open on
    but a directory; ``None`` for a file by its path and a descriptor not
    open (the reader says it)."""
    copied = fleet_analyze._copied
    f = tmp_path / "f.json"
    f.write_text("{}")
    assert copied(str(f)) is None
    fd = os.open(f, os.O_RDONLY)
    try:
        got = copied(f"/dev/fd/{fd}")
        assert got is not None and got[1] and got[0].st_ino == f.stat().st_ino
    finally:
        os.close(fd)
    d = os.open(tmp_path, os.O_RDONLY)
    try:
        assert copied(f"/proc/self/fd/{d}") is None
    finally:
        os.close(d)
    r, w = os.pipe()
    try:
        got = copied(f"/dev/fd/{r}")
        assert got is not None and got[1]
    finally:
        os.close(r)
        os.close(w)
    assert copied("/dev/fd/987") is None

"""More of what ``podnuma cgroups apply`` foresees (after
``test_apply_foresight``): what counts as a process listed in a plain
directory's ``cgroup.procs``, a file that is not a regular one never
opened to be read, the dry run's permission check given up where the
system call it needs is refused, and a ``--cgroup-root`` component with a
``_`` taken as the kubelet takes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from podnuma.cgroups import beneath
from podnuma.cgroups.beneath import Beneath
from podnuma.cgroups.plan import parse_cgroup_root
from podnuma.errors import InputError

from .test_apply_foresight import BUSY, STALE, _cli


@pytest.mark.parametrize(("procs", "holds"), [
    ("1234\n", True), ("0\n", False), ("-1\n", False), ("not a pid\n", False), ("\x00\x00\n", False),
    ("000\n", False), ("0 0 7\n", True), (" " * 70_000 + "1234\n", True), ("", False),
], ids=["pid", "zero", "negative", "words", "nul", "zeros", "a-pid-after-zeros", "past-the-read", "empty"])
@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run"])
def test_what_counts_as_a_process_listed(tmp_path: Path, procs: str, holds: bool, dry_run: bool) -> None:
    stale = tmp_path / STALE
    stale.mkdir(parents=True)
    (stale / "cgroup.procs").write_text(procs)
    res = _cli(tmp_path, *(["--dry-run"] if dry_run else []))
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert (BUSY in lines) is holds, lines
    assert any(line.startswith(f"rmdir {STALE}") for line in lines) is not holds
    assert stale.is_dir() is (holds or dry_run)


def test_a_file_that_is_not_regular_is_not_opened_to_be_read(tmp_path: Path) -> None:
    # (a FIFO with a writer would block a reader without O_NONBLOCK; a
    # device may start what it drives when opened: neither is opened)
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "d" / "cgroup.procs")
    tree = Beneath(str(tmp_path))
    opened: list[str] = []
    real = os.open

    def spy(path: str, *args: object, **kwargs: object) -> int:
        opened.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    try:
        os.open = spy  # type: ignore[assignment]
        with pytest.raises(OSError, match="not a regular file"):
            tree.read("d/cgroup.procs")
    finally:
        os.open = real
    assert "cgroup.procs" not in opened


def test_the_permission_check_is_given_up_where_faccessat2_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # (the call answers here: a missing file is said as such)
        if beneath._faccessat_usable(beneath._syscall(), fd):  # type: ignore[arg-type]
            with pytest.raises(FileNotFoundError):
                beneath._check_access(fd, "missing", os.W_OK, "missing")
        # a seccomp profile that answers EPERM (or a kernel before 5.8):
        # no prediction, the write itself answers
        monkeypatch.setattr(beneath, "_FACCESSAT_USABLE", [False])
        assert beneath._check_access(fd, "missing", os.W_OK, "missing") is None
    finally:
        os.close(fd)


@pytest.mark.parametrize(("driver", "root"), [("cgroupfs", ("a_b",)), ("systemd", ("a_b",))])
def test_an_underscore_in_the_cgroup_root_is_taken(driver: str, root: tuple[str, ...]) -> None:
    # (ParseCgroupfsToCgroupName does not check the root's components as
    # NewCgroupName checks the ones the kubelet makes)
    assert parse_cgroup_root("/a_b", driver) == root  # type: ignore[arg-type]
    # "." and ".." are taken as the kubelet takes them (cgroupfs: path.Join
    # cleans them away; systemd: parts of slice names), a NUL is not
    assert parse_cgroup_root("/a/..", driver) == (() if driver == "cgroupfs" else ("a", ".."))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="is not a usable cgroup name"):
        parse_cgroup_root("/a/b\x00", driver)  # type: ignore[arg-type]


def test_the_faccessat2_probe_reads_the_system_calls_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    for answer, usable in ((-1, False), (0, True)):  # (-1: EPERM from a seccomp profile, ENOSYS...)
        monkeypatch.setattr(beneath, "_FACCESSAT_USABLE", [])
        calls: list[tuple[object, ...]] = []

        def syscall(*args: object, answer: int = answer, calls: list[tuple[object, ...]] = calls) -> int:
            calls.append(args)
            return answer

        libc = SimpleNamespace(syscall=syscall)
        assert beneath._faccessat_usable(libc, 3) is usable  # type: ignore[arg-type]
        assert beneath._faccessat_usable(libc, 3) is usable  # type: ignore[arg-type]
        assert len(calls) == 1  # (asked once)
        assert calls[0][0].value == beneath._SYS_FACCESSAT2  # type: ignore[attr-defined]

"""A result written through a link to a device, a named pipe or a socket
(``/dev/stdout``, a link to a FIFO) is refused, not written by replacing
the link: replacing ``/dev/stdout`` would take the system's link away."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from podnuma.fileio import atomic_write

ROOT = Path(__file__).resolve().parents[1]
RESTART = ROOT / "examples" / "pod-level" / "restart.yaml"


def test_a_link_to_a_device_is_not_replaced(tmp_path: Path) -> None:
    link = tmp_path / "out"
    link.symlink_to("/dev/null")
    with pytest.raises(OSError) as e:
        atomic_write(link, b"x")
    assert e.value.errno == errno.EEXIST and "a link into /dev" in str(e.value)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    other = tmp_path / "to-fifo"
    other.symlink_to(fifo)  # (a link to a FIFO elsewhere: what it leads to decides)
    with pytest.raises(OSError) as e:
        atomic_write(other, b"x")
    assert e.value.errno == errno.EEXIST and "a link to a device, a named pipe or a socket" in str(e.value)
    assert other.is_symlink() and fifo.is_fifo()
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "out", "to-fifo"]  # (no temporary file left)


def test_a_link_to_a_file_or_to_nothing_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"old")
    for to in (target, tmp_path / "missing"):
        link = tmp_path / "out"
        link.unlink(missing_ok=True)
        link.symlink_to(to)
        atomic_write(link, b"new")
        assert not link.is_symlink() and link.read_bytes() == b"new"
    assert target.read_bytes() == b"old"  # (replaced, not followed)


def _podnuma(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_doors_refuse_a_link_to_standard_output_and_a_fifo(tmp_path: Path) -> None:
    out = tmp_path / "stdout"
    out.symlink_to("/proc/self/fd/1")  # (what /dev/stdout is)
    fifo = tmp_path / "pic.svg"
    os.mkfifo(fifo)
    for args, path in ((["restart", str(RESTART), "--as-scenario", str(out)], out),
                       (["topology", str(RESTART), "-o", "table", "--output-file", str(out)], out),
                       (["topology", str(RESTART), "--output-file", str(fifo)], fifo)):
        got = _podnuma(*args, cwd=tmp_path)  # (a FIFO without a reader: a hang before)
        assert got.returncode == 2, (args, got.stderr)
        errors = [line for line in got.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and str(path) in errors[0], got.stderr
        assert "not a regular file" in errors[0] or "a link into /proc" in errors[0], errors[0]
    assert out.is_symlink() and fifo.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pic.svg", "stdout"]


def _podnuma_into(stdout: Path, args: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``podnuma ARGS`` in a process of its own, standard output redirected
    to the file ``stdout``."""
    with stdout.open("w") as fh:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], cwd=cwd, env=env,
                              stdout=fh, stderr=subprocess.PIPE, text=True, timeout=120, check=False)


def test_a_link_into_proc_is_not_replaced_whatever_standard_output_is(tmp_path: Path) -> None:
    """``/dev/stdout`` leads to ``/proc/self/fd/1``, which leads to a
    regular file when standard output is redirected to one: the link is
    still not replaced (as root, that would take ``/dev/stdout`` away),
    and the file standard output goes to is not written either."""
    out = tmp_path / "stdout"
    out.symlink_to("/proc/self/fd/1")
    fleet = ROOT / "examples" / "fleet"
    for args in (["restart", str(RESTART), "--as-scenario", str(out)],
                 ["fleet", "analyze", str(fleet), "-o", "json", "--output-file", str(out)]):
        redirected = tmp_path / "redirected.txt"
        got = _podnuma_into(redirected, args, cwd=tmp_path)
        assert got.returncode == 2, (args, got.stderr)
        errors = [line for line in got.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "a link into /proc" in errors[0], got.stderr
        assert out.is_symlink() and os.readlink(out) == "/proc/self/fd/1"
    with pytest.raises(OSError) as e:
        atomic_write(out, b"x")
    assert e.value.errno == errno.EEXIST


def test_a_link_in_proc_is_not_replaced_and_said_so(tmp_path: Path) -> None:
    """``/proc/self/fd/1`` named itself (not a link to it): a link in
    ``/proc``, said as such (before: ``No such file or directory``, from
    the temporary file that cannot be made in ``/proc/self/fd``), and the
    file standard output goes to is not written."""
    for args in (["simulate", str(RESTART), "--as-scenario", "/proc/self/fd/1"],
                 ["topology", str(RESTART), "--output-file", "/proc/self/fd/1"]):
        redirected = tmp_path / "redirected.txt"
        got = _podnuma_into(redirected, args, cwd=tmp_path)
        assert got.returncode == 2, (args, got.stderr)
        assert got.stderr == (f"error: /proc/self/fd/1: {args[2]}: cannot write: it is a link in /proc (a "
                              "descriptor, standard output or a device): not replaced\n"), got.stderr
        assert redirected.read_text() == ""
    with pytest.raises(OSError) as e:
        atomic_write("/proc/self/fd/0", b"x")
    assert e.value.errno == errno.EEXIST


@pytest.mark.parametrize("command", [["simulate", str(ROOT / "examples/pod-level/pod-scope-2-mixed.yaml")],
                                     ["demo"]])
def test_checkpoints_are_not_written_into_the_kernel_s_trees(tmp_path: Path, command: list[str]) -> None:
    """``--checkpoint-dir`` that is, or links into, ``/dev``, ``/proc`` or
    ``/sys`` is refused before anything is written or printed (a link to
    ``/dev`` made ``cpu_manager_state`` and ``memory_manager_state`` there);
    ``/dev/shm``, a plain tmpfs, is a directory like any other."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for target, top in (("/dev", "/dev"), ("/proc/self", "/proc"), ("/sys/kernel", "/sys")):
        link = tmp_path / f"to-{top.strip('/')}"
        link.symlink_to(target)
        real = os.path.realpath(target) if target != "/proc/self" else None
        before = set(os.listdir(real)) if real else None
        proc = subprocess.run([sys.executable, "-m", "podnuma.cli", *command, "--checkpoint-dir", str(link)],
                              capture_output=True, text=True, env=env, timeout=120)
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
        assert proc.stderr.startswith(f"error: {link}: --checkpoint-dir: in {top} (a link to ")
        assert proc.stderr.endswith("): not a place for checkpoint files\n")
        if real:
            assert set(os.listdir(real)) == before
    if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK):
        shm = Path("/dev/shm") / f"podnuma-test-{os.getpid()}"
        try:
            proc = subprocess.run([sys.executable, "-m", "podnuma.cli", *command, "--checkpoint-dir", str(shm)],
                                  capture_output=True, text=True, env=env, timeout=120)
            assert proc.returncode == 0, proc.stderr
            assert (shm / "cpu_manager_state").is_file()
        finally:
            import shutil

            shutil.rmtree(shm, ignore_errors=True)


def test_a_link_elsewhere_in_dev_is_replaced_as_any_other(tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm")
    target = tmp_path / "target.txt"
    target.write_text("old")
    link = shm / f"podnuma-test-{os.getpid()}"
    link.symlink_to(target)
    try:
        atomic_write(link, b"new")  # (the link replaced, not followed)
        assert not link.is_symlink() and link.read_bytes() == b"new"
        assert target.read_text() == "old"
    finally:
        link.unlink()

"""An atomic write ends with an ``fsync`` of the directory the file was
renamed in: until then the rename may be lost in a crash, leaving the old
file (or none). A failed directory sync is the write's failure -- the
caller says so and does not count the file as written -- except where the
file system does not sync directories at all (``EINVAL`` on CIFS and some
FUSE file systems, ``EBADF``/``EISDIR``/``ENOTSUP`` elsewhere): there
nothing failed."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from podnuma import fileio
from podnuma.agent.state import StateDir
from podnuma.errors import InputError


def _directory_fsync_fails(monkeypatch: pytest.MonkeyPatch, code: int) -> list[int]:
    """Make ``fsync`` of a directory answer ``code`` (files still sync); the
    directories asked are listed in what is returned."""
    real: Callable[[int], None] = os.fsync
    asked: list[int] = []

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            asked.append(fd)
            raise OSError(code, os.strerror(code))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return asked


def test_a_failed_directory_fsync_fails_the_state_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _directory_fsync_fails(monkeypatch, errno.EIO)
    with fileio.StateWriter(tmp_path) as w, pytest.raises(OSError) as e:
        w.write_all({"cpu_manager_state": b"{}"})
    assert asked  # (the directory's fsync was asked)
    assert e.value.errno == errno.EIO
    assert "syncing the directory after the rename" in str(e.value)
    # renamed, but not known to be durable: no temporary file is left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cpu_manager_state"]


@pytest.mark.parametrize("code", [errno.EINVAL, errno.EBADF, errno.ENOTSUP], ids=["EINVAL", "EBADF", "ENOTSUP"])
def test_a_file_system_that_cannot_sync_a_directory_is_no_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    asked = _directory_fsync_fails(monkeypatch, code)
    with fileio.StateWriter(tmp_path) as w:
        w.write_all({"device-plugins/kubelet_internal_checkpoint": b"{}"})
    assert len(asked) == 2  # the state directory and device-plugins/
    assert (tmp_path / "device-plugins" / "kubelet_internal_checkpoint").read_bytes() == b"{}"
    fileio.atomic_write(tmp_path / "out.json", b"[]")
    assert (tmp_path / "out.json").read_bytes() == b"[]"


def test_a_failed_directory_fsync_fails_an_output_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _directory_fsync_fails(monkeypatch, errno.EIO)
    with pytest.raises(OSError) as e:
        fileio.atomic_write(tmp_path / "out.json", b"[]")
    assert e.value.errno == errno.EIO and "syncing the directory" in str(e.value)


def test_a_failed_directory_fsync_is_one_line_of_the_checkpoint_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--checkpoint-dir`` (exit 2 through :class:`InputError`)."""
    _directory_fsync_fails(monkeypatch, errno.EIO)
    with pytest.raises(InputError) as e:
        fileio.write_checkpoint_dir(tmp_path / "ck", {"cpu_manager_state": b"{}"})
    text = str(e.value)
    assert "\n" not in text
    assert "--checkpoint-dir: cannot write cpu_manager_state: Input/output error (syncing the directory" in text


def test_a_failed_directory_fsync_is_the_agents_write_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's checkpoint write: the error its loop reports, and the
    file is written again at the next write (not taken as written)."""
    state = StateDir(tmp_path)
    _directory_fsync_fails(monkeypatch, errno.EIO)
    with pytest.raises(InputError) as e:
        state.write({"cpu_manager_state": b"{}"})
    assert "cannot write cpu_manager_state: Input/output error (syncing the directory after the rename)" in str(e.value)
    monkeypatch.undo()
    assert state.write({"cpu_manager_state": b"{}"}) == 1


def test_a_failed_directory_fsync_of_the_status_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent's status file: the same one line (exit 2 through
    :class:`InputError`), not an internal error."""
    state = StateDir(tmp_path)
    _directory_fsync_fails(monkeypatch, errno.EIO)
    with pytest.raises(InputError) as e:
        state.write_status(b"{}")
    assert "cannot write podnuma-agent-status.json: Input/output error (syncing the directory" in str(e.value)

"""The spool behaves as ``tempfile.SpooledTemporaryFile`` for the calls made
on it, in memory and after rolling over to a temporary file."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from podnuma.inputs.spool import Spool, anonymous_file, spooled


def _play(f: Any, chunks: list[Any]) -> list[Any]:
    """The same calls on a spool or the standard library's class; what each returned."""
    seen: list[Any] = []
    for chunk in chunks:
        seen.append(f.write(chunk))
    seen.append(f.tell())
    seen.append(f.seek(3))
    seen.append(f.read(5))
    seen.append(f.seek(0, 2))
    seen.append(f.seek(0))
    seen.append(f.read())
    seen.append(f.seek(2))
    seen.append(f.truncate())
    seen.append(f.seek(0))
    seen.append(f.read())
    return seen


@pytest.mark.parametrize("max_size", [0, 4, 1 << 20])
def test_bytes_as_the_standard_spool(max_size: int) -> None:
    chunks = [b"abc\r\n", b"\x00\xff" * 10, b"end"]
    with Spool(max_size) as ours, tempfile.SpooledTemporaryFile(max_size=max_size) as theirs:
        assert _play(ours, chunks) == _play(theirs, chunks)
        assert ours.rolled == theirs._rolled  # type: ignore[attr-defined]
    assert ours.closed


@pytest.mark.parametrize("max_size", [0, 4, 1 << 20])
def test_text_as_the_standard_spool(max_size: int) -> None:
    # newlines ("\r\n", "\r") and characters beyond ASCII read back as the
    # standard class reads them back, before and after the rollover
    chunks = ["ab\r\ncd\rx\n", "é€😀" * 5, "end\n"]
    with Spool(max_size, mode="w+", encoding="utf-8") as ours, \
            tempfile.SpooledTemporaryFile(max_size=max_size, mode="w+", encoding="utf-8") as theirs:
        assert _play(ours, chunks) == _play(theirs, chunks)
        assert ours.rolled == theirs._rolled  # type: ignore[attr-defined]


def test_rolls_over_past_max_size_and_keeps_the_position() -> None:
    f = Spool(10)
    f.write(b"0123456789")
    assert not f.rolled  # at the limit: still in memory
    f.write(b"a")
    assert f.rolled
    assert f.tell() == 11
    f.write(b"bc")
    f.seek(0)
    assert f.read() == b"0123456789abc"
    f.close()


def test_truncate_to_a_size_beyond_the_limit_rolls_over() -> None:
    f = Spool(4)
    f.write(b"ab")
    f.truncate(8)
    assert f.rolled
    f.seek(0)
    assert f.read() == b"ab\x00\x00\x00\x00\x00\x00"
    f.close()


def test_typed_factory_gives_a_spool() -> None:
    with spooled(16, mode="w+", encoding="utf-8") as f:
        f.write("x")
        assert isinstance(f, Spool)


def _where(f: Any) -> str:
    """What ``/proc/self/fd`` says of an open file."""
    return os.readlink(f"/proc/self/fd/{f.fileno()}")


needs_tmpfile = pytest.mark.skipif(not hasattr(os, "O_TMPFILE") or not os.path.isdir("/proc/self/fd"),
                                   reason="Linux's O_TMPFILE and /proc")


@pytest.fixture(autouse=True)
def _tempfile_undecided(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # tempfile not yet settled on a directory (pytest's tmp_path, made
    # first, settles it): the spool then looks for one itself
    monkeypatch.setattr(tempfile, "tempdir", None)


@needs_tmpfile
def test_the_rollover_file_has_no_name_in_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    f = Spool(2)
    f.write(b"abcdef")
    assert f.rolled
    assert _where(f._file).startswith(f"{tmp_path}/") and _where(f._file).endswith("(deleted)")
    assert list(tmp_path.iterdir()) == []  # nothing to clean up
    f.seek(1)
    assert f.read() == b"bcdef"
    f.close()


@needs_tmpfile
def test_a_missing_or_not_a_directory_candidate_is_skipped(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # as tempfile.gettempdir skips them: TEMP is the next one looked at
    (tmp_path / "plain").write_text("x", encoding="utf-8")
    (tmp_path / "dir").mkdir()
    for tmpdir in (tmp_path / "missing", tmp_path / "plain"):
        monkeypatch.setenv("TMPDIR", str(tmpdir))
        monkeypatch.setenv("TEMP", str(tmp_path / "dir"))
        with anonymous_file("w+", "utf-8") as f:
            f.write("é")
            f.seek(0)
            assert f.read() == "é"
            assert _where(f).startswith(f"{tmp_path}/dir/")
    assert list((tmp_path / "dir").iterdir()) == []


def test_with_no_directory_for_it_tempfile_makes_the_file(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from podnuma.inputs import spool

    monkeypatch.setattr(spool, "_candidates", list)  # none where O_TMPFILE could open it
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with anonymous_file() as f:
        f.write(b"xyz")
        f.seek(0)
        assert f.read() == b"xyz"
        assert list(tmp_path.iterdir()) == []  # made and unlinked at once


@needs_tmpfile
def test_a_full_directory_leaves_the_choice_to_tempfile(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # TMPDIR takes an O_TMPFILE file but not four bytes (as a full file
    # system): tempfile decides, and its gettempdir moves on (here: TEMP)
    from podnuma.inputs import spool

    full, other = tmp_path / "full", tmp_path / "other"
    full.mkdir()
    other.mkdir()
    monkeypatch.setenv("TMPDIR", str(full))
    monkeypatch.setenv("TEMP", str(other))
    closed: list[int] = []

    def no_space(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(f"{full}/"):
            closed.append(fd)
            raise OSError(28, "No space left on device")
        os.write(fd, b"blat")

    monkeypatch.setattr(spool, "_usable", no_space)
    real_write = os.write

    def write(fd: int, data: bytes) -> int:  # gettempdir's own check of the directory
        if os.readlink(f"/proc/self/fd/{fd}").startswith(f"{full}/"):
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(tempfile._os, "write", write)  # type: ignore[attr-defined]
    with anonymous_file() as f:
        assert closed  # the full directory's file was opened and found full
        assert _where(f).startswith(f"{other}/")
        # that one closed: no descriptor of this process is a file of the full
        # directory (looked at by target, not counted: another test's thread
        # in this process may open or close descriptors meanwhile)
        assert [fd for fd in os.listdir("/proc/self/fd") if _target(fd).startswith(f"{full}/")] == []


def _target(fd: str) -> str:
    """What descriptor ``fd`` of this process is open on ("" once closed)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def test_a_directory_tempfile_has_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # tempfile loaded and settled (or told) on a directory: its choice stands
    chosen, env = tmp_path / "chosen", tmp_path / "env"
    chosen.mkdir()
    env.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(chosen))
    monkeypatch.setenv("TMPDIR", str(env))
    with anonymous_file() as f:
        f.write(b"x")
        if os.path.isdir("/proc/self/fd"):
            assert _where(f).startswith(f"{chosen}/")


def test_a_failed_rollover_keeps_the_data(monkeypatch: pytest.MonkeyPatch) -> None:
    # the copy to the temporary file fails (a full disk): the spool still
    # holds what was written, in memory, and closes cleanly
    from podnuma.inputs import spool

    class Full(io.BytesIO):
        def write(self, _: Any) -> int:
            raise OSError(28, "No space left on device")

    made: list[Any] = []

    def full_file(mode: str = "w+b", encoding: str | None = None, errors: str | None = None) -> Any:
        f = io.TextIOWrapper(Full(), encoding=encoding, errors=errors) if "b" not in mode else Full()
        made.append(f)
        return f

    monkeypatch.setattr(spool, "anonymous_file", full_file)
    for mode, data in (("w+b", b"abcdef"), ("w+", "abcdéf")):
        s = Spool(2, mode=mode, encoding=None if "b" in mode else "utf-8")
        with pytest.raises(OSError):
            s.write(data)
        assert not s.rolled and made[-1].closed
        s.seek(0)
        assert s.read() == data
        s.close()


@needs_tmpfile
def test_a_rollover_does_not_import_tempfile(tmp_path: Path) -> None:
    code = ("import sys\nfrom podnuma.inputs.spool import Spool\nf = Spool(1)\nf.write(b'abc')\n"
            "assert f.rolled\nprint('tempfile' in sys.modules, 'shutil' in sys.modules)\n")
    env = dict(os.environ, TMPDIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=60, check=True).stdout
    assert out.split() == ["False", "False"]


def test_an_error_handler_holds_across_the_rollover() -> None:
    """A text spool's ``errors`` (``surrogatepass``: a lone surrogate kept)
    in memory and, after the rollover, in the temporary file."""
    text = "name-\ud83d-" * 8
    with spooled(64, mode="w+", encoding="utf-8", errors="surrogatepass") as s:
        s.write(text[:20])
        assert not s.rolled
        s.write(text[20:])
        assert s.rolled
        s.seek(0)
        assert s.read() == text

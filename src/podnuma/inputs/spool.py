"""A spooled file that loads :mod:`tempfile` only when it rolls over.

:class:`Spool` behaves as ``tempfile.SpooledTemporaryFile`` does for the
calls podnuma makes (write, read, seek, tell, truncate, flush, close, a
``with`` block): the data stays in memory (a ``BytesIO``; in text mode a
``TextIOWrapper`` over one, newlines handled as that class handles them)
until more than ``max_size`` bytes or characters were written, then moves to
an anonymous temporary file. ``tempfile`` (with ``shutil`` and ``random``,
about 4 ms of a command's start-up) is not imported for it where Linux's
``O_TMPFILE`` gives the file (what ``tempfile.TemporaryFile`` opens there
too: a file with no name, in the first of the directories
``tempfile.gettempdir`` looks at that exists); elsewhere, when that
directory refuses it or is full, or when ``tempfile`` has already settled on
a directory, ``tempfile`` is imported at that moment and makes the file
(:func:`anonymous_file`). A short run never needs either.

A speed module: the standard library's class, without its import cost.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from types import TracebackType
from typing import IO, Any, cast

__all__ = ["Spool", "spooled"]


def _candidates() -> list[str]:
    """The directories ``tempfile.gettempdir`` looks at, in its order: the
    ``TMPDIR``, ``TEMP`` and ``TMP`` variables, then the usual places, then
    the working directory."""
    out = [v for v in (os.environ.get(n) for n in ("TMPDIR", "TEMP", "TMP")) if v]
    out += ["/tmp", "/var/tmp", "/usr/tmp"]
    with contextlib.suppress(OSError):
        out.append(os.getcwd())
    return out


def _usable(fd: int) -> None:
    """The check ``tempfile.gettempdir`` makes of a directory, on the file
    opened there: four bytes written (``OSError`` where they cannot be: a
    full file system, a quota), then taken off again."""
    os.write(fd, b"blat")
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)


def anonymous_file(mode: str = "w+b", encoding: str | None = None, errors: str | None = None) -> IO[Any]:
    """A read-write file with no name, deleted when closed, as
    ``tempfile.TemporaryFile(mode, encoding=encoding, errors=errors)`` gives: opened with
    ``O_TMPFILE`` in the first directory of :func:`_candidates` that exists
    (skipping those that do not) when that directory takes it and four bytes
    in it (:func:`_usable`); else, or when ``tempfile`` is loaded and has
    its directory already (chosen, or set by the program: its choice
    stands), by ``tempfile``."""
    loaded = sys.modules.get("tempfile")
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and (loaded is None or getattr(loaded, "tempdir", None) is None):
        flags = flag | os.O_RDWR | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        for where in _candidates():
            try:
                fd = os.open(where, flags, 0o600)
            except (FileNotFoundError, NotADirectoryError):
                continue  # not there: tempfile.gettempdir would not choose it either
            except OSError:
                break  # there, but no O_TMPFILE file in it (or not writable): tempfile decides
            try:
                _usable(fd)
            except OSError:
                os.close(fd)
                break  # full: tempfile decides (gettempdir moves on to the next directory)
            try:
                return open(fd, mode, encoding=encoding, errors=errors)  # noqa: SIM115 (the caller closes it)
            except BaseException:
                os.close(fd)
                raise
    import tempfile

    return tempfile.TemporaryFile(mode=mode, encoding=encoding, errors=errors)  # noqa: SIM115


def spooled(max_size: int, mode: str = "w+b", encoding: str | None = None,
            errors: str | None = None) -> IO[Any]:
    """A :class:`Spool`, typed as the file it stands for."""
    return cast("IO[Any]", Spool(max_size, mode, encoding, errors))


class Spool:
    """``tempfile.SpooledTemporaryFile(max_size, mode, encoding=..., errors=...)``,
    importing ``tempfile`` on rollover only."""

    def __init__(self, max_size: int, mode: str = "w+b", encoding: str | None = None,
                 errors: str | None = None) -> None:
        self._max_size = max_size
        self._mode = mode
        self._encoding = encoding
        self._errors = errors
        self._rolled = False
        self._file: IO[Any]
        if "b" in mode:
            self._file = io.BytesIO()
        else:
            self._file = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors)

    def _check(self) -> None:
        if not self._rolled and self._max_size and self._file.tell() > self._max_size:
            self.rollover()

    def rollover(self) -> None:
        """Move the data to a temporary file (the position kept)."""
        if self._rolled:
            return
        old = self._file
        new = anonymous_file(self._mode, self._encoding, self._errors)  # (closed by close())
        try:
            pos = old.tell()
            if isinstance(old, io.TextIOWrapper):
                old.flush()
                data = old.buffer.getvalue()
                new.buffer.write(data)  # type: ignore[attr-defined]
            else:
                new.write(old.getvalue())  # type: ignore[attr-defined]
            new.seek(pos, 0)
        except BaseException:
            # the copy failed (a full disk): the data stays where it was
            new.close()
            raise
        self._file = new
        self._rolled = True

    @property
    def rolled(self) -> bool:
        """Whether the data moved to a temporary file."""
        return self._rolled

    @property
    def buffer(self) -> IO[bytes]:
        """A text spool's bytes (in memory or in the temporary file, as the
        text file's ``buffer`` is); flush first."""
        return cast("IO[bytes]", self._file.buffer)  # type: ignore[attr-defined]

    def write(self, s: Any) -> int:
        n = self._file.write(s)
        self._check()
        return n

    def writelines(self, lines: Any) -> None:
        self._file.writelines(lines)
        self._check()

    def read(self, size: int = -1) -> Any:
        return self._file.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def truncate(self, size: int | None = None) -> int:
        if size is None:
            return self._file.truncate()
        if size > self._max_size:
            self.rollover()
        return self._file.truncate(size)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def __enter__(self) -> Spool:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

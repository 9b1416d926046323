"""A spooled file that loads :mod:`tempfile` only when it rolls over.

:class:`Spool` behaves as ``tempfile.SpooledTemporaryFile`` does for the
calls podnuma makes (write, read, seek, tell, truncate, flush, close, a
``with`` block): the data stays in memory (a ``BytesIO``; in text mode a
``TextIOWrapper`` over one, newlines handled as that class handles them)
until more than ``max_size`` bytes or characters were written, then moves to
an anonymous temporary file. ``tempfile`` (with ``shutil`` and ``random``,
about 4 ms of a command's start-up) is imported at that moment, so a short
run never loads it.

A speed module: the standard library's class, without its import cost.
"""

from __future__ import annotations

import io
from types import TracebackType
from typing import IO, Any, cast

__all__ = ["Spool", "spooled"]


def spooled(max_size: int, mode: str = "w+b", encoding: str | None = None) -> IO[Any]:
    """A :class:`Spool`, typed as the file it stands for."""
    return cast("IO[Any]", Spool(max_size, mode, encoding))


class Spool:
    """``tempfile.SpooledTemporaryFile(max_size, mode, encoding=...)``,
    importing ``tempfile`` on rollover only."""

    def __init__(self, max_size: int, mode: str = "w+b", encoding: str | None = None) -> None:
        self._max_size = max_size
        self._mode = mode
        self._encoding = encoding
        self._rolled = False
        self._file: IO[Any]
        if "b" in mode:
            self._file = io.BytesIO()
        else:
            self._file = io.TextIOWrapper(io.BytesIO(), encoding=encoding)

    def _check(self) -> None:
        if not self._rolled and self._max_size and self._file.tell() > self._max_size:
            self.rollover()

    def rollover(self) -> None:
        """Move the data to a temporary file (the position kept)."""
        if self._rolled:
            return
        import tempfile  # only now: its imports are most of a short run's start-up

        old = self._file
        new: IO[Any] = tempfile.TemporaryFile(  # noqa: SIM115 (closed by close())
            mode=self._mode, encoding=self._encoding
        )
        pos = old.tell()
        if isinstance(old, io.TextIOWrapper):
            raw = old.detach()
            assert isinstance(raw, io.BytesIO)
            new.buffer.write(raw.getvalue())  # type: ignore[attr-defined]
        else:
            new.write(old.getvalue())  # type: ignore[attr-defined]
        new.seek(pos, 0)
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

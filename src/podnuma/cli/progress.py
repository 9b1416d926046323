"""Progress bars on standard error, for every command (without click: the
fast path's ``fleet analyze`` draws one too).

A bar is drawn only on a terminal, never with ``--quiet``, and only once
the work has run :func:`shown_after` seconds (0.5 unless
``PODNUMA_PROGRESS_AFTER_S`` says otherwise): work that ends sooner shows
none (a bar that flashes for one admission says nothing). It disappears
when the work is done. Under ``NO_COLOR`` it has no colour and no other
style either, as every output has none then.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Iterator

__all__ = ["Bar", "bar", "shown_after"]

#: seconds of work before a bar is shown, unless the environment says
PROGRESS_AFTER_S = 0.5


def shown_after() -> float:
    """Seconds of work before a bar is shown: ``PODNUMA_PROGRESS_AFTER_S``
    (a number of seconds, 0 or more), else :data:`PROGRESS_AFTER_S`."""
    try:
        value = float(os.environ.get("PODNUMA_PROGRESS_AFTER_S", ""))
    except ValueError:
        return PROGRESS_AFTER_S
    return value if math.isfinite(value) and value >= 0 else PROGRESS_AFTER_S


class Bar:
    """The work's progress, told as it goes (:meth:`update`: done of
    total; :meth:`advance`: that much more done); drawn once the work has
    run long enough (nothing is drawn when it is not to be: ``quiet``, or
    standard error not a terminal)."""

    def __init__(self, what: str, total: int | None, *, drawn: bool) -> None:
        self._progress = None
        self._shown = False
        self._done = 0
        self._total = total
        self._start = time.monotonic()
        self._after = shown_after()
        if not drawn:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        plain = bool(os.environ.get("NO_COLOR"))
        self._progress = Progress(
            what if plain else f"[bold]{what}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=Console(stderr=True, color_system=None) if plain else Console(stderr=True),
            transient=True,
            # (rich would put a proxy of a closed standard output, None, in
            # its place, and leave it there: the output then went to the
            # terminal)
            redirect_stdout=sys.stdout is not None,
        )
        self._task = self._progress.add_task(what, total=total)

    def update(self, done: int, total: int | None = None) -> None:
        self._done = done
        if total is not None:
            self._total = total
        if self._progress is None:
            return
        self._progress.update(self._task, completed=done, total=self._total)
        if not self._shown and time.monotonic() - self._start >= self._after:
            self._shown = True
            self._progress.start()

    def advance(self, n: int) -> None:
        self.update(self._done + n)

    def close(self) -> None:
        if self._progress is not None and self._shown:
            self._shown = False
            self._progress.stop()


@contextlib.contextmanager
def bar(what: str, total: int | None = None, *, quiet: bool) -> Iterator[Bar]:
    """A :class:`Bar` for the block's work, drawn on standard error when it
    is a terminal and ``quiet`` is not set."""
    from podnuma.cli.guard import is_terminal

    b = Bar(what, total, drawn=not quiet and is_terminal(sys.stderr))
    try:
        yield b
    finally:
        b.close()

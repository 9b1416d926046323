"""What the ``podnuma`` process itself does around a fast-path command: the
interpreter's cyclic garbage collector held off while the command loads.

Loading a command's modules makes tens of thousands of objects that live
as long as the process (functions, classes, module dictionaries), and the
collector, run every 700 new objects, walks them again and again while
they load, then once more at exit. In a process of its own (the console
script, ``python -m podnuma.cli``: :func:`podnuma.cli.run`), a fast-path
``simulate`` holds the collector off (:func:`held`) until its run is set up
(the scenario's head read, the node started: :func:`loaded`), then moves
everything made so far out of the collector's sight (``gc.freeze``, which
the standard library documents for this use) and lets it run as usual:
the steps' garbage is collected as before. Called in a process that is
not podnuma's own (a test calling :func:`podnuma.cli.main`), nothing
changes: freezing would keep that process's objects from ever being
collected.

A command whose output is written and whose files, temporary directories
and child processes are closed may also end its process at once
(:func:`exit_at_once`, :func:`end`): without Python's finalization, which
frees every object the run made one by one and runs a last collection
over them (about 30 ms after a 100,000-pod fleet report; ``mypy`` ends
the same way for the same reason).

A speed module (docs/speed.md: about 19 M instructions of a one-step
``simulate``'s 173 M, and about 23 M at 10,000 steps).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

__all__ = ["Terminated", "begin", "end", "exit_at_once", "held", "is_own", "loaded"]

#: whether the collector is held off for the command being loaded
_held = [False]


@contextmanager
def held(own_process: bool) -> Iterator[None]:
    """The collector held off inside the block when this process is
    podnuma's own and the collector is on; on again at the end of the block
    if :func:`loaded` was not reached (an error while loading)."""
    hold = own_process and gc.isenabled()
    if hold:
        gc.disable()
        _held[0] = True
    try:
        yield
    finally:
        if hold and _held[0]:
            _held[0] = False
            gc.enable()


def loaded() -> None:
    """The command is loaded: what exists now stays out of collections
    (``gc.freeze``) and the collector runs again, if it was held off."""
    if _held[0]:
        _held[0] = False
        gc.freeze()
        gc.enable()


#: whether this process is podnuma's own (:func:`begin`), and whether its
#: command said it may end at once (:func:`exit_at_once`)
_own = [False]
_at_once = [False]


class Terminated(BaseException):
    """``SIGTERM`` reached podnuma's own process (:func:`begin`): raised in
    its main thread, so that the command stops as on Ctrl-C, its clean-up
    included (temporary and staged files removed, the processes it started
    ended: every clean-up is a ``finally`` or an ``except BaseException``),
    without Ctrl-C's ``Aborted!``; the process then ends by the signal
    (:func:`end`). Not a ``KeyboardInterrupt``: click would write a line
    for it."""


#: whether SIGTERM stopped the command (:class:`Terminated`)
_terminated = [False]


def _on_sigterm(signum: int, frame: object) -> None:
    _terminated[0] = True
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (a second one ends the clean-up at once)
    raise Terminated()


def begin() -> None:
    """This process is podnuma's own (the console script,
    ``python -m podnuma.cli``): it runs one command and ends. ``SIGTERM``
    (``timeout``, ``kill``, a container stopped) stops its command as
    Ctrl-C does, clean-up included, unless it was ignored when the process
    started (a command that serves, ``agent`` and ``serve``, takes it as its
    own signal to stop)."""
    _own[0] = True
    _at_once[0] = False
    _terminated[0] = False
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)


def is_own() -> bool:
    """Whether this process is podnuma's own (:func:`begin`)."""
    return _own[0]


def exit_at_once() -> None:
    """The command has written its output and closed what it opened (its
    files, temporary directories and the processes it started): its
    process may end without Python's finalization (:func:`end`, in
    podnuma's own process only)."""
    _at_once[0] = True


def end(code: int) -> NoReturn:
    """End podnuma's own process with ``code`` (stopped by ``SIGTERM``: by
    the signal itself, once the command has cleaned up, as a shell expects
    of a command the signal ended: status 143): at once when the command
    said it may (:func:`exit_at_once`): the functions registered with
    :mod:`atexit` run (a library's clean-up: the kubernetes client removes
    the certificate and key files it wrote for a kubeconfig), the standard
    streams are flushed, then ``os._exit``. As usual (``sys.exit``) when
    it did not, when a thread other than the main one is still running
    (finalization waits for it), or when a standard stream is closed or
    cannot be flushed (a closed pipe ends as it always has)."""
    if _own[0] and _terminated[0]:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        code = 128 + signal.SIGTERM  # (not reached: the signal ends the process)
    if (_own[0] and _at_once[0] and _alone()
            and sys.stdout is not None and sys.stderr is not None):  # (None: closed at the start)
        import atexit

        atexit._run_exitfuncs()  # (each run once: the list is emptied)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - finalization reports it, as before
            pass
        else:
            os._exit(code)
    sys.exit(code)


def _alone() -> bool:
    """Whether no thread but the main one is running (no ``threading``
    imported: none is)."""
    threading = sys.modules.get("threading")
    if threading is None:
        return True
    main = threading.main_thread()
    return all(t is main or t.daemon or not t.is_alive() for t in threading.enumerate())

"""The ``podnuma`` command line: the only package that imports click.

``app`` holds the group and the exit-code map; each command lives in a
module of its own beside it and is registered by one line in
``app._register_commands``; ``options`` holds the options every command
shares; ``guard`` the error guard. :func:`main` first offers the command
line to the fast path (``fast``: ``podnuma simulate FILE -o json`` run
without loading click), then to click; :func:`run` (the console script,
``python -m podnuma.cli``) is :func:`main` in a process of podnuma's own
(``process``: the garbage collector held off while a fast-path command
loads, and the process ended at once by a command whose output is written).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from podnuma.cli.app import cli

__all__ = ["cli", "main", "run"]


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """The command line ``argv`` (the process's arguments when ``None``)
    run; returns the exit code. ``own_process``: this process runs nothing
    but this command (:func:`run`)."""
    from podnuma.cli.fast import fast_main

    code = fast_main(argv, own_process=own_process)
    if code is not None:
        return code
    from podnuma.cli.app import main as click_main

    return click_main(argv)


def run() -> NoReturn:
    """The console script (and ``python -m podnuma.cli``): the process's
    command line run in a process of its own, then exit with its code.
    The process is podnuma's own (:func:`podnuma.cli.process.begin`) when
    the main module calls this at its top level; called otherwise (under
    ``python -m cProfile``, ``trace`` or a test, which catch the
    ``SystemExit`` and go on) it only raises ``SystemExit``."""
    import signal
    import sys

    from podnuma.cli.process import Terminated, begin, end

    caller = sys._getframe(1)
    main_module = sys.modules.get("__main__")
    if caller.f_code.co_name == "<module>" and main_module is not None \
            and caller.f_globals is vars(main_module):
        begin()
    try:
        code = main(own_process=True)
    except SystemExit as e:  # (click's commands exit this way)
        if e.code is not None and not isinstance(e.code, int):
            raise
        code = e.code or 0
    except Terminated:  # SIGTERM, the command cleaned up: ended by the signal
        code = 128 + signal.SIGTERM
    end(code)


def __getattr__(name: str) -> Any:
    # ``podnuma.cli.cli``, the click group: click loaded when it is asked for
    if name == "cli":
        from podnuma.cli.app import cli as group

        return group
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

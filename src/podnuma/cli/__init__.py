"""The ``podnuma`` command line: the only package that imports click.

``app`` holds the group and the exit-code map; each command lives in a
module of its own beside it and is registered by one line in
``app._register_commands``; ``options`` holds the options every command
shares; ``guard`` the error guard. :func:`main` (the console script) first
offers the command line to the fast path (``fast``: ``podnuma simulate FILE
-o json`` run without loading click), then to click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podnuma.cli.app import cli

__all__ = ["cli", "main"]


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the exit code."""
    from podnuma.cli.fast import fast_main

    code = fast_main(argv)
    if code is not None:
        return code
    from podnuma.cli.app import main as click_main

    return click_main(argv)


def __getattr__(name: str) -> Any:
    # ``podnuma.cli.cli``, the click group: click loaded when it is asked for
    if name == "cli":
        from podnuma.cli.app import cli as group

        return group
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

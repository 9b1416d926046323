"""The ``podnuma`` command line: the only package that imports click.

``app`` holds the group, the error guard and the exit-code map; each command
lives in a module of its own beside it and is registered by one line in
``app._register_commands``; ``options`` holds the options every command
shares.
"""

from podnuma.cli.app import cli, main

__all__ = ["cli", "main"]

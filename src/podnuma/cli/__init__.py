"""The ``podnuma`` command line: the only package that imports click.

``app`` holds the group, the error guard and the exit-code map; each command
lives in a module of its own beside it and is registered in
``app._register_commands``.
"""

from podnuma.cli.app import DEMO_NAME, cli, main

__all__ = ["DEMO_NAME", "cli", "main"]

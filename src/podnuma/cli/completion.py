"""``podnuma completion SHELL``: the shell completion script (click's
completion), to source from the shell's start-up file."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from podnuma.cli.app import _guard, cli, fail
from podnuma.cli.options import echo

__all__ = ["SHELLS", "completion_command"]

SHELLS = ("bash", "zsh", "fish")


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
def completion_command(shell: str) -> None:
    """Print the completion script for SHELL.

    \b
      bash:  echo 'eval "$(podnuma completion bash)"' >> ~/.bashrc
      zsh:   echo 'eval "$(podnuma completion zsh)"' >> ~/.zshrc
      fish:  podnuma completion fish > ~/.config/fish/completions/podnuma.fish
    """
    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships all three
        fail(f"no completion for {shell}")
    comp = cls(cli, {}, "podnuma", "_PODNUMA_COMPLETE")
    source = comp.source()
    _guard(lambda: echo(source))

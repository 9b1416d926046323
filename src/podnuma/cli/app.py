"""The ``podnuma`` command group; the one error guard and the exit codes
(from :mod:`podnuma.cli.guard`).

Every command lives in a module of its own in this package and is
registered by one line in :func:`_register_commands` (by import path: the
module is imported only when the command runs or its help is shown, and
this module never imports a command module, so no import cycle is
possible). A command module does its work inside :func:`guard`
(:mod:`podnuma.cli.guard`, which does not import click; its docstring
gives the exit codes: 0 done, 2 invalid input or a missing optional extra,
1 a bug), re-exported here for every command.
"""

from __future__ import annotations

import importlib
import sys

import click

from podnuma.cli.guard import (
    EXIT_BUG,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXTRA_MODULES,
    fail,
    guard,
    import_failed,
    is_output_failure,
    missing_extra,
    one_line,
    output_failed,
    quiet_pipe,
)

__all__ = [
    "EXIT_BUG",
    "EXIT_INPUT",
    "EXIT_OK",
    "EXTRA_MODULES",
    "cli",
    "fail",
    "guard",
    "is_quiet",
    "main",
    "missing_extra",
]

#: the guard's names, under which the command modules import them
_guard = guard
_quiet_pipe = quiet_pipe
_import_failed = import_failed


def _reader_gone() -> bool:
    """Whether standard output is a pipe whose reader has gone (the
    kernel reports an error condition on its writing end)."""
    import select

    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else -1
        if fd < 0:
            return False
        poller = select.poll()
        poller.register(fd, 0)
        return any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (OSError, ValueError):
        return False


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from podnuma import engine_build
    from podnuma.service.messages import version

    click.echo(f"podnuma, version {version()} (engine: {engine_build()})")
    ctx.exit()


def is_quiet() -> bool:
    """Whether ``podnuma --quiet`` was given (no progress, no notes on
    standard error; errors are still printed)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False
    root = ctx.find_root()
    return bool(root.params.get("quiet"))


def _quiet_here(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.find_root().params["quiet"] = True


def _quiet_anywhere(command: click.Command) -> None:
    """``-q``/``--quiet`` taken after the command's words too, as kubectl
    takes its global flags anywhere (``podnuma fleet analyze DIR -q``):
    a hidden option of every command, the same as ``podnuma -q``."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _quiet_anywhere(sub)
        return
    if any(isinstance(p, click.Option) and "--quiet" in p.opts for p in command.params):
        return
    command.params.append(click.Option(["--quiet", "-q"], is_flag=True, expose_value=False,
                                       hidden=True, callback=_quiet_here))


class _Group(click.Group):
    """Click's group with lazily imported commands, and usage errors (bad
    option values, missing arguments) reported like every other invalid
    input: one ``error:`` line on standard error, exit code 2."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._lazy: dict[str, str] = {}

    def _path_of(self, args: object, prog: str) -> str:
        """The command path the words of ``args`` name (``podnuma cgroups
        plan``, ``prog`` first): each word that names a command of the group
        reached so far."""
        path = [prog]
        cmd: click.Command = self
        for word in args if isinstance(args, (list, tuple)) else ():
            if not isinstance(cmd, click.Group):
                break
            if not isinstance(word, str) or word.startswith("-"):
                continue
            try:
                sub = cmd.get_command(click.Context(cmd, info_name=path[-1]), word)
            except Exception:  # noqa: BLE001 - a command that cannot load: named as far as known
                sub = None
            if sub is None:
                break
            path.append(word)
            cmd = sub
        return " ".join(path)

    def add_lazy(self, name: str, target: str) -> None:
        """Register command ``name`` as ``"package.module:attribute"``."""
        self._lazy[name] = target

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self._lazy.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):  # pragma: no cover - a registration typo
            raise TypeError(f"{target} is not a click command")
        _quiet_anywhere(command)
        return command

    def main(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        standalone = kwargs.pop("standalone_mode", True)
        if not standalone:
            return super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[call-overload]
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[call-overload]
        except SystemExit as e:
            # click ends a closed pipe under what it printed itself (the
            # help, the version) with exit code 1, its standard output then
            # wrapped so that the last flush is quiet; a closed pipe is 0 here
            if e.code == 1 and "PacifyFlushWrapper" in type(sys.stdout).__name__ and _reader_gone():
                _quiet_pipe()
            raise
        except click.UsageError as e:
            no_args = getattr(click.exceptions, "NoArgsIsHelpError", None)
            if no_args is not None and isinstance(e, no_args):  # bare "podnuma": the help
                e.show()
                sys.exit(e.exit_code)
            # (the parser raises some without their context: the command's
            # path then found from the words of the command line)
            path = e.ctx.command_path if e.ctx is not None else self._path_of(
                kwargs.get("args") if kwargs.get("args") is not None else sys.argv[1:],
                str(kwargs.get("prog_name") or "podnuma"))
            # one line: click lists a choice's values on lines of their own
            message = " ".join(e.format_message().split())
            click.echo(f"error: {one_line(message)} (see '{path} --help')", err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            _quiet_pipe()
        except ImportError as e:  # a command module importing a missing extra
            _import_failed(e)
        except OSError as e:
            # what click prints itself (the help, the version) or a command
            # outside its guard (the completion script) on a full device
            if not is_output_failure(e):
                raise
            output_failed(e)
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
    help="Show the version and exit.",
)
@click.option(
    "--quiet", "-q", is_flag=True, default=False,
    help="No progress bars or notes on standard error (errors are still printed).",
)
def cli(quiet: bool) -> None:
    """The kubelet's node resource managers (CPU, memory, topology), simulated.

    Every command that prints a result takes -o for its output format
    (-o json for programs) and '-' for a file read from standard input.
    Shell completion: see 'podnuma completion --help'.
    """


def _register_commands() -> None:
    """One line per command: its name and ``module:attribute``."""
    group = cli
    assert isinstance(group, _Group)
    group.add_lazy("simulate", "podnuma.cli.simulate:simulate_command")
    group.add_lazy("demo", "podnuma.cli.demo:demo_command")
    group.add_lazy("explain", "podnuma.cli.explain:explain_command")
    group.add_lazy("topology", "podnuma.cli.topology:topology_command")
    group.add_lazy("compare", "podnuma.cli.compare:compare_command")
    group.add_lazy("advise", "podnuma.cli.advise:advise_command")
    group.add_lazy("restart", "podnuma.cli.restart:restart_command")
    group.add_lazy("completion", "podnuma.cli.completion:completion_command")
    group.add_lazy("node", "podnuma.cli.node:node_group")
    group.add_lazy("state", "podnuma.cli.state:state_group")
    group.add_lazy("cgroups", "podnuma.cli.cgroups:cgroups_group")
    group.add_lazy("agent", "podnuma.cli.agent:agent_command")
    group.add_lazy("podresources", "podnuma.cli.podresources:podresources_command")
    group.add_lazy("fleet", "podnuma.cli.fleet:fleet_group")
    group.add_lazy("serve", "podnuma.cli.serve:serve_command")


_register_commands()


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the exit code."""
    try:
        cli.main(args=argv, prog_name="podnuma", standalone_mode=True)
    except SystemExit as e:
        code = e.code
        if code is None:
            return EXIT_OK
        if isinstance(code, int):
            return code
        click.echo(str(code), err=True)
        return EXIT_BUG
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

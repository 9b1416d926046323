"""The ``podnuma`` command group, the one error guard and the exit codes.

Every command lives in a module of its own in this package and is
registered by one line in :func:`_register_commands` (by import path: the
module is imported only when the command runs or its help is shown, and
this module never imports a command module, so no import cycle is
possible). A command module does its work inside :func:`_guard`, which maps
every error to one ``error:`` line on standard error and an exit code:

* 0 (:data:`EXIT_OK`): the command did its work (whether or not pods were
  admitted), or the reader of its output went away (``podnuma demo | head``);
* 2 (:data:`EXIT_INPUT`): invalid input (a file, a field, a value; a
  corrupt checkpoint; a configuration the kubelet would refuse to start
  with; a bad option);
* 1 (:data:`EXIT_BUG`): anything unexpected (a bug): a one-line message,
  the traceback only with ``PODNUMA_DEBUG=1``.

A module of an optional extra that is not installed (grpc for ``agent`` and
``podresources``, distributed for ``fleet analyze --dask``...) is invalid
input too (exit 2), with the ``pip install 'podnuma[EXTRA]'`` line that
installs it (:func:`missing_extra`, here for every command).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

import click

__all__ = [
    "EXIT_BUG",
    "EXIT_INPUT",
    "EXIT_OK",
    "cli",
    "fail",
    "guard",
    "is_quiet",
    "main",
    "missing_extra",
]

EXIT_OK = 0
EXIT_BUG = 1
EXIT_INPUT = 2

T = TypeVar("T")


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from podnuma import engine_build
    from podnuma.service.messages import version

    click.echo(f"podnuma, version {version()} (engine: {engine_build()})")
    ctx.exit()


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    """Print ``error: MESSAGE`` on standard error and exit with ``code``."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _quiet_pipe() -> NoReturn:
    # The reader went away: point stdout at /dev/null so the interpreter's
    # final flush cannot fail again, and end quietly.
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(EXIT_OK)


def _guard(fn: Callable[[], T]) -> T:
    """Run ``fn``, mapping podnuma's errors to one message and an exit code."""
    try:
        return fn()
    except (KeyboardInterrupt, SystemExit, click.exceptions.Exit, click.ClickException):
        raise
    except BrokenPipeError:
        _quiet_pipe()
    except ImportError as e:
        _import_failed(e)
    except Exception as e:
        # the words of errors: imported only when one happened
        from podnuma.service.messages import error_message, is_input_error

        if is_input_error(e):
            fail(error_message(e), EXIT_INPUT)
        if os.environ.get("PODNUMA_DEBUG") == "1":
            raise
        fail(f"{error_message(e)} (set PODNUMA_DEBUG=1 for a traceback)", EXIT_BUG)


#: the public name of the guard
guard = _guard

#: The top-level modules of each optional extra (pyproject.toml's
#: optional-dependencies), and the extra that installs them.
EXTRA_MODULES: dict[str, str] = {
    "grpc": "agent", "google.protobuf": "agent", "google": "agent", "watchfiles": "agent",
    "prometheus_client": "agent",
    "fastapi": "web", "uvicorn": "web", "starlette": "web", "pydantic": "web",
    "pydantic_core": "web",
    "dask": "fleet", "distributed": "fleet", "plotly": "fleet", "kubernetes": "fleet",
}


def missing_extra(err: ImportError) -> str | None:
    """The message for an optional extra that is not installed, or None
    when ``err`` is not about one (a bug, then)."""
    name = err.name or ""
    extra = EXTRA_MODULES.get(name) or EXTRA_MODULES.get(name.partition(".")[0])
    if extra is None:
        return None
    ctx = click.get_current_context(silent=True)
    command = ctx.command_path if ctx is not None else "podnuma"
    return f"{command} needs the {extra} extra ({name} is missing): pip install 'podnuma[{extra}]'"


def _import_failed(err: ImportError) -> NoReturn:
    """A module could not be imported: an optional extra not installed
    (exit 2, the line that installs it), else a bug (exit 1)."""
    message = missing_extra(err)
    if message is not None:
        fail(message, EXIT_INPUT)
    if os.environ.get("PODNUMA_DEBUG") == "1":
        raise err
    fail(
        f"internal error: {type(err).__name__}: {err} (set PODNUMA_DEBUG=1 for a traceback)",
        EXIT_BUG,
    )


def is_quiet() -> bool:
    """Whether ``podnuma --quiet`` was given (no progress, no notes on
    standard error; errors are still printed)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return False
    root = ctx.find_root()
    return bool(root.params.get("quiet"))


class _Group(click.Group):
    """Click's group with lazily imported commands, and usage errors (bad
    option values, missing arguments) reported like every other invalid
    input: one ``error:`` line on standard error, exit code 2."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._lazy: dict[str, str] = {}

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
        return command

    def main(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        standalone = kwargs.pop("standalone_mode", True)
        if not standalone:
            return super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[call-overload]
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[call-overload]
        except click.UsageError as e:
            no_args = getattr(click.exceptions, "NoArgsIsHelpError", None)
            if no_args is not None and isinstance(e, no_args):  # bare "podnuma": the help
                e.show()
                sys.exit(e.exit_code)
            hint = ""
            if e.ctx is not None:
                hint = f" (see '{e.ctx.command_path} --help')"
            click.echo(f"error: {e.format_message()}{hint}", err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(EXIT_BUG)
        except BrokenPipeError:
            _quiet_pipe()
        except ImportError as e:  # a command module importing a missing extra
            _import_failed(e)
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

    Every command takes -o for its output format (-o json everywhere) and
    '-' for a file read from standard input. Shell completion: see
    'podnuma completion --help'.
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

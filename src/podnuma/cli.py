"""The ``podnuma`` command line.

Thin: parses arguments, calls the core through the scenario loader and
runner, renders, writes checkpoint files, and maps errors to exit codes:

* 0: the scenario ran (whether or not pods were admitted);
* 2: invalid input (a file, a field, a value; a corrupt checkpoint; a
  configuration the kubelet would refuse to start with);
* 1: anything unexpected (a bug): a one-line message, the traceback only
  with ``PODNUMA_DEBUG=1``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Mapping
from importlib import metadata, resources
from pathlib import Path
from typing import NoReturn, TypeVar

import click

from podnuma.errors import InputError, KubeletStartupError

__all__ = ["cli", "main", "DEMO_NAME"]

DEMO_NAME = "demo.yaml"
OUTPUTS = ("table", "json", "yaml")
EXIT_OK = 0
EXIT_BUG = 1
EXIT_INPUT = 2

T = TypeVar("T")


def _version() -> str:
    try:
        return metadata.version("podnuma")
    except metadata.PackageNotFoundError:  # pragma: no cover - source tree without install
        return "0+unknown"


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _guard(fn: Callable[[], T]) -> T:
    """Run ``fn`` mapping podnuma's errors to messages and exit codes."""
    from podnuma.cm.checkpoint import CheckpointError
    from podnuma.scenario.run import StartupFailure

    try:
        return fn()
    except InputError as e:
        _fail(str(e), EXIT_INPUT)
    except CheckpointError as e:  # a KubeletStartupError: catch it first
        _fail(f"invalid checkpoint: {e}", EXIT_INPUT)
    except KubeletStartupError as e:
        where = e.location() if isinstance(e, StartupFailure) else ""
        _fail(f"kubelet would not start: {e}" + (f" ({where})" if where else ""), EXIT_INPUT)
    except (KeyboardInterrupt, SystemExit, click.exceptions.Exit, click.ClickException):
        raise
    except BrokenPipeError:
        # The reader went away (podnuma demo | head): stop quietly.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_BUG)
    except Exception as e:
        if os.environ.get("PODNUMA_DEBUG") == "1":
            raise
        _fail(
            f"internal error: {type(e).__name__}: {e} (set PODNUMA_DEBUG=1 for a traceback)",
            EXIT_BUG,
        )


def _write_checkpoints(directory: Path, files: Mapping[str, bytes]) -> None:
    from podnuma.cm.checkpoint import atomic_write

    if directory.exists() and not directory.is_dir():
        raise InputError("--checkpoint-dir: not a directory", file=str(directory))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--checkpoint-dir: cannot create: {e.strerror or e}", file=str(directory)) from None
    for name, data in files.items():
        try:
            atomic_write(directory / name, data)
        except OSError as e:
            raise InputError(
                f"--checkpoint-dir: cannot write {name}: {e.strerror or e}", file=str(directory)
            ) from None


def _emit(result: object, output: str) -> None:
    from podnuma.scenario.document import build_document, dump_json, dump_yaml
    from podnuma.scenario.run import RunResult

    assert isinstance(result, RunResult)
    if output == "table":
        from podnuma.render.table import make_console, render_table

        render_table(result, make_console(sys.stdout))
        return
    doc = build_document(result)
    click.echo(dump_json(doc) if output == "json" else dump_yaml(doc), nl=False)


def _simulate(load: Callable[[], object], output: str, checkpoint_dir: Path | None) -> None:
    from podnuma.scenario.load import Scenario
    from podnuma.scenario.run import RunResult, run_scenario

    def go() -> RunResult:
        scenario = load()
        assert isinstance(scenario, Scenario)
        result = run_scenario(scenario)
        if checkpoint_dir is not None:
            _write_checkpoints(checkpoint_dir, result.checkpoint_files)
        return result

    result = _guard(go)
    _guard(lambda: _emit(result, output))


_output_option = click.option(
    "--output",
    "-o",
    type=click.Choice(OUTPUTS),
    default="table",
    show_default=True,
    help="table for people; json or yaml for the output document.",
)
_checkpoint_option = click.option(
    "--checkpoint-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Write cpu_manager_state and memory_manager_state there (created if needed).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="podnuma")
def cli() -> None:
    """The kubelet's node resource managers (CPU, memory, topology), simulated."""


@cli.command()
@click.argument("scenario", type=click.Path(path_type=Path, dir_okay=True))
@_output_option
@_checkpoint_option
def simulate(scenario: Path, output: str, checkpoint_dir: Path | None) -> None:
    """Run SCENARIO (YAML or JSON) through the kubelet's admission and resource managers."""
    from podnuma.scenario.load import load_scenario

    _simulate(lambda: load_scenario(scenario), output, checkpoint_dir)


def demo_text() -> str:
    """The embedded demo scenario."""
    return (resources.files("podnuma.scenario") / "demo" / DEMO_NAME).read_text(encoding="utf-8")


@cli.command()
@_output_option
@_checkpoint_option
def demo(output: str, checkpoint_dir: Path | None) -> None:
    """Run the embedded demo: a two-socket node, a handful of pods."""
    from podnuma.scenario.load import load_scenario_text

    _simulate(
        lambda: load_scenario_text(demo_text(), name=DEMO_NAME, base_dir=Path.cwd()),
        output,
        checkpoint_dir,
    )


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

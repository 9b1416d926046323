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
    """Write every checkpoint file or none: each is staged in a temporary
    file in ``directory`` (written, fsynced), and only when all are staged
    are they renamed over their targets. A failure leaves no temporary file
    and no half-written checkpoint behind."""
    import tempfile

    if directory.exists() and not directory.is_dir():
        raise InputError("--checkpoint-dir: not a directory", file=str(directory))
    created = not directory.exists()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--checkpoint-dir: cannot create: {e.strerror or e}", file=str(directory)) from None
    for name in files:
        target = directory / name
        if target.exists() and not target.is_file():
            raise InputError(
                f"--checkpoint-dir: cannot write {name}: it exists and is not a regular file",
                file=str(directory),
            )
    staged: list[tuple[str, Path]] = []
    name = ""
    try:
        for name, data in files.items():
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
            staged.append((name, Path(tmp_name)))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        for name, staged_path in staged:
            os.replace(staged_path, directory / name)
    except OSError as e:
        for _, staged_path in staged:
            with contextlib.suppress(OSError):
                staged_path.unlink()
        if created:
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise InputError(
            f"--checkpoint-dir: cannot write {name}: {e.strerror or e}", file=str(directory)
        ) from None
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


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


class _Group(click.Group):
    """Click's group with usage errors (bad option values, missing
    arguments) reported like every other invalid input: one ``error:`` line
    on standard error, exit code 2."""

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
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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


def demo_text(name: str = DEMO_NAME) -> str:
    """An embedded demo scenario."""
    return (resources.files("podnuma.scenario") / "demo" / name).read_text(encoding="utf-8")


POD_LEVEL_DEMO_NAME = "pod-level.yaml"


def _pod_level_demo_run() -> object:
    from podnuma.scenario.load import load_scenario_text
    from podnuma.scenario.run import run_scenario

    scenario = load_scenario_text(
        demo_text(POD_LEVEL_DEMO_NAME), name=POD_LEVEL_DEMO_NAME, base_dir=Path.cwd()
    )
    return run_scenario(scenario)


def _pod_level_demo_table(result: object) -> None:
    """The demo's pod-level section: the training pod per-container (step 0)
    and with pod-level resources (step 2), side by side."""
    from rich.console import Group
    from rich.text import Text

    from podnuma.render.side_by_side import side_by_side
    from podnuma.render.table import make_console, print_renderable
    from podnuma.scenario.run import RunResult

    assert isinstance(result, RunResult)
    per_container, pod_level = result.steps[0], result.steps[2]
    heading = Text(
        "\nPod-level resource managers (KEP-5526): a training pod with three small "
        "sidecars, written two ways",
        style="bold",
    )
    table = side_by_side(
        per_container,
        pod_level,
        main="train",
        title=f"{pod_level.pod} on {result.node.name} (topology manager: restricted, pod scope)",
    )
    print_renderable(make_console(sys.stdout), Group(heading, table))


@cli.command()
@_output_option
@_checkpoint_option
def demo(output: str, checkpoint_dir: Path | None) -> None:
    """Run the embedded demo: a two-socket node, a handful of pods, then a
    training pod per-container and with pod-level resources, side by side."""
    from podnuma.scenario.document import build_document, dump_json, dump_yaml, step_document
    from podnuma.scenario.load import load_scenario_text
    from podnuma.scenario.run import RunResult, run_scenario

    def go() -> tuple[RunResult, object]:
        scenario = load_scenario_text(demo_text(), name=DEMO_NAME, base_dir=Path.cwd())
        result = run_scenario(scenario)
        pod_level = _pod_level_demo_run()
        if checkpoint_dir is not None:
            _write_checkpoints(checkpoint_dir, result.checkpoint_files)
        return result, pod_level

    result, pod_level = _guard(go)
    if output == "table":
        _guard(lambda: _emit(result, "table"))
        _guard(lambda: _pod_level_demo_table(pod_level))
        return
    assert isinstance(pod_level, RunResult)
    doc = build_document(result)
    doc["podLevelDemo"] = {
        "perContainer": step_document(pod_level.steps[0]),
        "podLevel": step_document(pod_level.steps[2]),
    }
    click.echo(dump_json(doc) if output == "json" else dump_yaml(doc), nl=False)


def _register_commands() -> None:
    """The analysis commands live beside their renderers."""
    from podnuma.cli.agent import agent_command
    from podnuma.cli.cgroups import cgroups_group
    from podnuma.cli.node import node_group
    from podnuma.cli.podresources import podresources_command
    from podnuma.cli.state import state_group
    from podnuma.commands.topology import topology_command
    from podnuma.render.explain import explain_command
    from podnuma.whatif.advise import advise_command
    from podnuma.whatif.compare import compare_command

    cli.add_command(explain_command)
    cli.add_command(topology_command)
    cli.add_command(compare_command)
    cli.add_command(advise_command)
    cli.add_command(agent_command)
    cli.add_command(podresources_command)
    cli.add_command(node_group)
    cli.add_command(cgroups_group)
    cli.add_command(state_group)


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

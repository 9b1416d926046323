"""``podnuma simulate SCENARIO``: run a scenario through the kubelet's
admission and resource managers."""

from __future__ import annotations

import codecs
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from podnuma.cli.app import guard
from podnuma.cli.options import (
    as_scenario_option,
    checkpoint_option,
    echo,
    file_argument,
    note,
    output_option,
    set_option,
    write_scenario_file,
)
from podnuma.inputs.documents import is_stdin
from podnuma.inputs.overrides import Override, parse_overrides
from podnuma.inputs.scenario_stream import ReadWhole, ScenarioFile
from podnuma.inputs.spool import spooled
from podnuma.inputs.text import TextInput
from podnuma.render.serialize import write_run_document, write_run_stream
from podnuma.scenario.document import ordered_checkpoints
from podnuma.scenario.run import StreamedRun
from podnuma.service import scenario as service

if TYPE_CHECKING:
    from podnuma.scenario.run import RunResult

__all__ = ["simulate_command"]


@click.command("simulate")
@file_argument("scenario")
@output_option("simulate", "table (wide: every column) for people; json or yaml for the "
               "output document.")
@checkpoint_option
@click.option(
    "--detail",
    is_flag=True,
    help="json/yaml: also every provider's hints (providerHints) and the whole "
    "PodResources list (podResources) in each step.",
)
@set_option
@as_scenario_option
def simulate_command(
    scenario: str, output: str, checkpoint_dir: Path | None, detail: bool,
    set_values: tuple[str, ...], as_scenario: Path | None,
) -> None:
    """Run SCENARIO (YAML or JSON; '-': standard input) through the kubelet's
    admission and resource managers."""

    if output in ("json", "yaml") and as_scenario is None:
        # streamed step by step, into a spool that is printed once the whole
        # run succeeded: neither the input's steps, their results nor the
        # document are held whole, and nothing is printed before the input
        # has been read and played to the end
        overrides = guard(lambda: parse_overrides(set_values))
        with spooled(_SPOOL, mode="w+", encoding="utf-8") as spool:
            guard(lambda: _stream_run(scenario, spool, output, detail, checkpoint_dir, overrides))
            guard(lambda: _print(spool))
        return

    def go() -> tuple[RunResult, dict[str, Any]]:
        overrides = parse_overrides(set_values)
        loaded, result = service.run(
            TextInput.read(scenario, what="scenario"), note=note, overrides=overrides
        )
        if checkpoint_dir is not None:
            from podnuma.fileio import write_checkpoint_dir

            write_checkpoint_dir(checkpoint_dir, result.checkpoint_files)
        if as_scenario is not None:
            write_scenario_file(as_scenario, service.effective_scenario(loaded), loaded.overrides)
        return result, service.config_record(loaded)

    result, record = guard(go)
    if output in ("json", "yaml"):
        # streamed step by step: the document is never held whole
        guard(lambda: _stream(result, output, detail, record))
        return
    from podnuma.render.table import render_run  # the table's libraries: only for it

    text = guard(lambda: render_run(result, wide=output == "wide"))
    guard(lambda: echo(text))


def _stream(result: RunResult, output: str, detail: bool, record: dict[str, Any]) -> None:
    out = sys.stdout
    write_run_document(result, out, output, detail=detail, extra=record)
    out.flush()


#: output held in memory before the spool moves to a temporary file
_SPOOL = 16 << 20


def _stream_run(
    scenario: str, spool: IO[str], output: str, detail: bool, checkpoint_dir: Path | None,
    overrides: tuple[Override, ...],
) -> None:
    src: TextInput | ScenarioFile = (
        TextInput.read(scenario, what="scenario") if is_stdin(scenario)
        else ScenarioFile(scenario, what="scenario")
    )
    try:
        try:
            run = _write_run(src, spool, output, detail, overrides)
        except ReadWhole as again:  # a file not laid out for one pass: read whole
            spool.seek(0)
            spool.truncate()
            run = _write_run(again.text, spool, output, detail, overrides)
    finally:
        if isinstance(src, ScenarioFile):
            src.close()
    if checkpoint_dir is not None:
        from podnuma.fileio import write_checkpoint_dir  # its temporary names: only when writing

        write_checkpoint_dir(checkpoint_dir, run.checkpoint_files())


def _write_run(
    src: TextInput | ScenarioFile, spool: IO[str], output: str, detail: bool,
    overrides: tuple[Override, ...],
) -> StreamedRun:
    run = service.stream(src, note=note, pod_resources=detail, overrides=overrides)
    write_run_stream(
        run.node, run.results(),
        lambda: (ordered_checkpoints(run.checkpoints()), service.config_record(run.scenario)),
        spool, output, detail=detail,
    )
    return run


def _print(spool: IO[str]) -> None:
    out = sys.stdout
    target = getattr(out, "buffer", None)
    if target is not None and codecs.lookup(getattr(out, "encoding", None) or "ascii").name == "utf-8":
        # UTF-8 both ways: the spool's bytes as they are (neither decoded nor
        # encoded again)
        out.flush()
        spool.flush()
        raw: IO[bytes] = spool.buffer  # type: ignore[attr-defined]  # (a text Spool: its bytes)
        raw.seek(0)
        while chunk := raw.read(1 << 20):  # shutil.copyfileobj, without importing shutil
            target.write(chunk)
        target.flush()
        return
    spool.seek(0)
    while text := spool.read(1 << 20):
        out.write(text)
    out.flush()

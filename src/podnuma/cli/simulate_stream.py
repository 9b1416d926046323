"""``podnuma simulate SCENARIO -o json|yaml|table|wide``: the run streamed
step by step, without click.

Both ways into the command run this: the click command
(:mod:`podnuma.cli.simulate`) and the fast path that starts it without
loading click (:mod:`podnuma.cli.fast`). The steps are read,
played and written one at a time into a spool that is printed once the
whole run succeeded: neither the input's steps, their results nor the
document are held whole, and nothing is printed before the input has been
read and played to the end. The table is written once the run is over,
from its rows kept in a spool of their own
(:mod:`podnuma.render.table_stream`).
"""

from __future__ import annotations

import codecs
import re
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from podnuma.cli.guard import guard
from podnuma.cli.process import exit_at_once, loaded
from podnuma.inputs.documents import is_stdin
from podnuma.inputs.overrides import Override, parse_overrides
from podnuma.inputs.scenario_stream import ReadWhole, ScenarioFile
from podnuma.inputs.spool import spooled
from podnuma.inputs.text import TextInput
from podnuma.render.serialize import write_run_stream
from podnuma.scenario.document import ordered_checkpoints
from podnuma.scenario.run import StreamedRun
from podnuma.service import scenario as service

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["simulate_streamed"]

#: output held in memory before the spool moves to a temporary file
_SPOOL = 16 << 20


def simulate_streamed(
    scenario: str, output: str, detail: bool, checkpoint_dir: Path | None,
    set_values: tuple[str, ...], note: Callable[[str], None],
    echo: Callable[[str], None] | None = None,
) -> None:
    """Run ``scenario`` and print its document (``output``: json or yaml)
    or its tables (table or wide), every error through the guard. ``echo``: how
    text goes to a standard output that does not take UTF-8 as it is."""
    overrides = guard(lambda: parse_overrides(set_values))
    # (surrogatepass: a lone surrogate of the input, in a name shown in a
    # table, kept for standard output's own error handler to judge)
    with spooled(_SPOOL, mode="w+", encoding="utf-8", errors="surrogatepass") as spool:
        guard(lambda: _stream_run(scenario, spool, output, detail, checkpoint_dir, overrides, note))
        guard(lambda: _print(spool, echo))
    exit_at_once()  # (printed, the spool and the scenario file closed)


def _stream_run(
    scenario: str, spool: IO[str], output: str, detail: bool, checkpoint_dir: Path | None,
    overrides: tuple[Override, ...], note: Callable[[str], None],
) -> None:
    src: TextInput | ScenarioFile = (
        TextInput.read(scenario, what="scenario") if is_stdin(scenario)
        else ScenarioFile(scenario, what="scenario")
    )
    try:
        try:
            run = _write_run(src, spool, output, detail, overrides, note)
        except ReadWhole as again:  # a file not laid out for one pass: read whole
            spool.seek(0)
            spool.truncate()
            run = _write_run(again.text, spool, output, detail, overrides, note)
    finally:
        if isinstance(src, ScenarioFile):
            src.close()
    if checkpoint_dir is not None:
        from podnuma.fileio import write_checkpoint_dir  # its temporary names: only when writing

        write_checkpoint_dir(checkpoint_dir, run.checkpoint_files())


def _write_run(
    src: TextInput | ScenarioFile, spool: IO[str], output: str, detail: bool,
    overrides: tuple[Override, ...], note: Callable[[str], None],
) -> StreamedRun:
    table = output in ("table", "wide")
    run = service.stream(src, note=note, pod_resources=detail and not table, overrides=overrides)
    loaded()  # the head read, the node started: the collector runs (podnuma.cli.process)
    if table:
        _write_table(run, spool, wide=output == "wide")
        return run
    write_run_stream(
        run.node, run.results(),
        lambda: (ordered_checkpoints(run.checkpoints()), service.config_record(run.scenario)),
        spool, output, detail=detail,
    )
    return run


def _write_table(run: StreamedRun, spool: IO[str], *, wide: bool) -> None:
    """The run's tables on ``spool``, as standard output's console shows
    them (with colours on a terminal)."""
    from podnuma.render.table import make_console
    from podnuma.render.table_stream import StreamedTable
    from podnuma.scenario.run import run_scenario

    scenario = run.scenario
    console = make_console()
    with StreamedTable(scenario.name, scenario.machine, run.node,
                       styled=StreamedTable.styled_for(console)) as table:
        add = table.add
        for step in run.results():
            add(step)
        # (a run without steps: its restored pods, from the node started again)
        table.write(spool, console, wide=wide,
                    restored=lambda: run_scenario(scenario, checkpoints=False, step_pod_resources=False))


def _print(spool: IO[str], echo: Callable[[str], None] | None = None) -> None:
    out = sys.stdout
    if out is None:  # closed when the command started: nowhere to write (as click, nothing)
        return
    target = getattr(out, "buffer", None)
    spool.flush()
    raw: IO[bytes] = spool.buffer  # type: ignore[attr-defined]  # (a text Spool: its bytes)
    if (target is not None and codecs.lookup(getattr(out, "encoding", None) or "ascii").name == "utf-8"
            and not _surrogates(raw)):
        # UTF-8 both ways: the spool's bytes as they are (neither decoded nor
        # encoded again)
        out.flush()
        raw.seek(0)
        while chunk := raw.read(1 << 20):  # shutil.copyfileobj, without importing shutil
            target.write(chunk)
        target.flush()
        return
    # another encoding, or a lone surrogate: the whole text in one write, so
    # that what standard output cannot encode stops it before a byte is out
    # (as when the text was printed whole)
    spool.seek(0)
    text = spool.read()
    if echo is not None:
        echo(text)
    else:
        out.write(text)
    out.flush()


#: a lone surrogate as the spool's ``surrogatepass`` writes it in UTF-8
_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")


def _surrogates(raw: IO[bytes]) -> bool:
    """Whether the spool's bytes hold a lone surrogate."""
    raw.seek(0)
    tail = b""  # a chunk's last byte when it starts a sequence the next one ends
    while chunk := raw.read(1 << 20):
        if (tail or b"\xed" in chunk) and _SURROGATE.search(tail + chunk):
            return True
        tail = b"\xed" if chunk.endswith(b"\xed") else b""
    return False

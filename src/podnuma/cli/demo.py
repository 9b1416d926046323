"""``podnuma demo``: the embedded demo scenarios."""

from __future__ import annotations

from pathlib import Path

import click

from podnuma.buildinfo import engine_note
from podnuma.cli.app import guard
from podnuma.cli.options import checkpoint_option, echo, output_option
from podnuma.render.output import render_output
from podnuma.service import scenario as service

__all__ = ["demo_command"]


@click.command("demo")
@output_option("demo", "table (wide: every column) for people; json or yaml for the "
               "output document.")
@checkpoint_option
def demo_command(output: str, checkpoint_dir: Path | None) -> None:
    """Run the embedded demo: a two-socket node, a handful of pods, then a
    training pod per-container and with pod-level resources, side by side."""

    def go() -> str:
        demo = service.demo()

        def table() -> str:
            # the table's libraries (rich): only for the table
            from podnuma.render.side_by_side import pod_level_demo_text
            from podnuma.render.table import render_run

            return render_run(demo.run, wide=output == "wide") + pod_level_demo_text(demo.pod_level)

        text = render_output(output, demo.document, {"table": table, "wide": table})
        if checkpoint_dir is not None:
            from podnuma.fileio import write_checkpoint_dir

            write_checkpoint_dir(checkpoint_dir, demo.run.checkpoint_files)
        return text

    text = guard(go)
    guard(lambda: echo(text))
    note = engine_note()
    if note:  # the install could not compile the engine: say so, on stderr
        click.echo(f"note: the engine runs as pure Python ({note}); with a C compiler and "
                   "the Python headers, reinstalling compiles it (docs/speed.md)", err=True)

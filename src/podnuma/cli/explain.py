"""``podnuma explain SCENARIO``: the decision trail of each admission, and
for a rejected pod the nearest admissible configuration."""

from __future__ import annotations

import click

from podnuma.cli.app import guard
from podnuma.cli.options import echo, file_argument, note, output_option, progress_bar
from podnuma.errors import InputError
from podnuma.inputs.text import TextInput
from podnuma.render.output import render_output
from podnuma.service import scenario as service

__all__ = ["explain_command"]


def _write_scenario(got: service.Explanation, path: str, candidate: int | None) -> str | None:
    """``--as-scenario FILE``: the scenario of the change, written to FILE
    (a note on stderr), or returned as the text to print for ``-``."""
    from podnuma.fileio import atomic_write
    from podnuma.render.serialize import dump_scenario_yaml

    text = dump_scenario_yaml(service.candidate_scenario(got, candidate=candidate))
    if path == "-":
        return text.rstrip("\n")
    atomic_write(path, text.encode("utf-8"), mode=0o644)
    note(f"scenario written to {path}: podnuma simulate {path}")
    return None


def _not_nan(param: click.Parameter, value: float | None) -> float | None:
    """``FloatRange`` lets ``nan`` through (it compares false with both bounds)."""
    if value is not None and value != value:
        raise click.BadParameter("nan is not a number of seconds", param=param)
    return value


@click.command("explain")
@file_argument("scenario")
@click.option("--step", "step_index", type=int, default=None, help="Only the addPod step with this index.")
@click.option("--pod", "pod_ref", default=None, help="Only the admissions of this pod (NAMESPACE/NAME or UID).")
@output_option("explain", "text for people; json or yaml for the full decision trail.")
@click.option(
    "--no-search", is_flag=True, default=False,
    help="Do not re-run the scenario to find the nearest admissible configuration.",
)
@click.option(
    "--search-time", "search_time", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
    callback=lambda _ctx, param, value: _not_nan(param, value),
    help="Stop each rejected pod's search after SECONDS; the output lists the changes not tried.",
)
@click.option(
    "--picture/--no-picture", default=None,
    help="Show the topology picture after each step (default: when one admission is explained).",
)
@click.option(
    "--as-scenario", "as_scenario", default=None, metavar="FILE",
    help="Write the scenario that replays the nearest admitted change of the one rejected admission "
    "explained (or --candidate N) to FILE ('-': standard output, instead of the explanation).",
)
@click.option(
    "--candidate", "candidate", type=click.IntRange(min=1), default=None, metavar="N",
    help="With --as-scenario: the N-th change tried (as numbered in the output), not the nearest admitted.",
)
def explain_command(
    scenario: str,
    step_index: int | None,
    pod_ref: str | None,
    output: str,
    no_search: bool,
    search_time: float | None,
    picture: bool | None,
    as_scenario: str | None,
    candidate: int | None,
) -> None:
    """Explain each admission of SCENARIO ('-': standard input): hints,
    merge, pools, rejection and what would fit."""

    def go() -> str:
        src = TextInput.read(scenario, what="scenario")
        with progress_bar("explaining admissions") as advance:
            got = service.explain(
                src, step=step_index, pod=pod_ref, search=not no_search, progress=advance,
                time_budget=search_time, note=note,
            )
        doc = got.document
        if as_scenario is not None:
            written = _write_scenario(got, as_scenario, candidate)
            if written is not None:
                return written
        elif candidate is not None:
            raise InputError("--candidate goes with --as-scenario")

        def text() -> str:
            # the text renderers (and rich) are imported for text output only
            from podnuma.render.explain import admission_pictures, render_text
            from podnuma.render.table import capture

            show = picture if picture is not None else len(doc["admissions"]) == 1
            pictures = admission_pictures(got.run, doc) if show else None
            return capture(lambda console: render_text(doc, console, pictures=pictures))

        return render_output(output, lambda: doc, {"text": text})

    text = guard(go)
    guard(lambda: echo(text))

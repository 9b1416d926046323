"""``podnuma explain SCENARIO``: the decision trail of each admission, and
for a rejected pod the nearest admissible configuration."""

from __future__ import annotations

from pathlib import Path

import click

from podnuma.analysis.restart import restart_text
from podnuma.cli.app import guard
from podnuma.cli.options import (
    Seconds,
    as_scenario_option,
    check_output_file,
    echo,
    file_argument,
    note,
    output_option,
    progress_bar,
    set_option,
    write_scenario_file,
)
from podnuma.errors import InputError
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.text import TextInput
from podnuma.render.output import render_output
from podnuma.service import explain as explain_service
from podnuma.service import scenario as service

__all__ = ["explain_command"]


def _candidate_number(text: str) -> int | None:
    """``--candidate``: a change's number (from 1), or ``nearest`` (None)."""
    if text.strip().lower() == "nearest":
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(f"--candidate {text!r}: a change's number (1, 2, ...) or 'nearest'")
    return n


@click.command("explain")
@file_argument("scenario")
@click.option("--step", "step_index", type=int, default=None, help="Only the addPod step with this index.")
@click.option("--pod", "pod_ref", default=None, help="Only the admissions of this pod (NAMESPACE/NAME or UID).")
@output_option("explain", "table: for people (text: the same); json or yaml: the full decision trail.")
@click.option(
    "--no-search", is_flag=True, default=False,
    help="Do not re-run the scenario to find the nearest admissible configuration.",
)
@click.option(
    "--search-time", "search_time", type=Seconds(min=0), default=None, metavar="SECONDS",
    help="Stop each rejected pod's search after SECONDS; the output lists the changes not tried.",
)
@click.option(
    "--picture/--no-picture", default=None,
    help="Show the topology picture after each step (default: when one admission is explained).",
)
@set_option
@as_scenario_option
@click.option(
    "--candidate", "candidate", default=None, metavar="N|nearest",
    help="With --as-scenario: write the scenario of the N-th change the search tried (as numbered "
    "in the output), or of the nearest admitted one, instead of the scenario as it ran.",
)
def explain_command(
    scenario: str,
    step_index: int | None,
    pod_ref: str | None,
    output: str,
    no_search: bool,
    search_time: float | None,
    picture: bool | None,
    set_values: tuple[str, ...],
    as_scenario: Path | None,
    candidate: str | None,
) -> None:
    """Explain each admission of SCENARIO ('-': standard input): hints,
    merge, pools, rejection and what would fit."""
    if no_search and search_time is not None:
        raise click.UsageError("--search-time bounds the search that --no-search turns off: give one of them")
    if picture and output in ("json", "yaml"):
        raise click.UsageError(f"--picture draws in the text; -o {output} has no picture (give -o table)")
    if as_scenario is not None:
        scenario_path = as_scenario
        guard(lambda: check_output_file(scenario_path, "--as-scenario"))  # (before the search, as advise)

    def go() -> str:
        overrides = parse_overrides(set_values)
        if candidate is not None and as_scenario is None:
            raise InputError("--candidate goes with --as-scenario")
        chosen = None if candidate is None else _candidate_number(candidate)
        src = TextInput.read(scenario, what="scenario")
        with progress_bar("explaining admissions") as advance:
            got = explain_service.explain(
                src, step=step_index, pod=pod_ref, search=not no_search, progress=advance,
                time_budget=search_time, note=note, overrides=overrides,
            )
        doc = got.document
        if as_scenario is not None:
            if candidate is not None:
                written, at = service.candidate_scenario_at(got, candidate=chosen, step=step_index, pod=pod_ref)
                write_scenario_file(as_scenario, written, got.scenario.overrides)
                later = len(written["steps"]) - at - 1
                after = f", then the {later} later step(s) compared" if later else ""
                note(f"scenario written to {as_scenario} (the change at step {at}{after}): "
                     f"podnuma simulate {as_scenario}")
            else:
                write_scenario_file(
                    as_scenario, service.effective_scenario(got.scenario), got.scenario.overrides
                )

        def text() -> str:
            # the text renderers (and rich) are imported for text output only
            from podnuma.render.explain import admission_pictures, render_text
            from podnuma.render.table import capture

            show = picture if picture is not None else len(doc["admissions"]) == 1
            pictures = admission_pictures(got.run, doc) if show else None
            text = capture(lambda console: render_text(doc, console, pictures=pictures))
            if "restart" in doc:
                text += "".join(f"{line}\n" for line in restart_text(doc["restart"]))
            return text

        return render_output(output, lambda: doc, {"table": text, "text": text})

    text = guard(go)
    guard(lambda: echo(text))

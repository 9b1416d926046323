"""``podnuma explain SCENARIO``: the decision trail of each admission, and
for a rejected pod the nearest admissible configuration."""

from __future__ import annotations

import json
from typing import Any

import click

from podnuma.analysis.explain import explain_run, run_for_explain
from podnuma.cli.app import guard
from podnuma.cli.options import echo, file_argument, note_not_modelled, output_option, progress_bar
from podnuma.errors import InputError
from podnuma.inputs.documents import input_name
from podnuma.inputs.scenario import load_scenario
from podnuma.scenario.document import dump_yaml
from podnuma.scenario.run import RunResult

__all__ = ["explain_command"]


def _pictures(result: RunResult, doc: dict[str, Any]) -> dict[int, str]:
    from podnuma.render.picture import ownership_after
    from podnuma.render.picture import render_text as picture_text

    out: dict[int, str] = {}
    positions = {s.index: i for i, s in enumerate(result.steps)}
    for adm in doc["admissions"]:
        pos = positions.get(adm["step"])
        if pos is not None:
            out[adm["step"]] = picture_text(result.machine, ownership_after(result, pos))
    return out


def _not_nan(param: click.Parameter, value: float | None) -> float | None:
    """``FloatRange`` lets ``nan`` through (it compares false with both bounds)."""
    if value is not None and value != value:
        raise click.BadParameter("nan is not a number of seconds", param=param)
    return value


@click.command("explain")
@file_argument("scenario")
@click.option("--step", "step_index", type=int, default=None, help="Only the addPod step with this index.")
@click.option("--pod", "pod_ref", default=None, help="Only the admissions of this pod (NAMESPACE/NAME or UID).")
@output_option(("text", "json", "yaml"), "text", "text for people; json or yaml for the full "
               "decision trail.")
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
def explain_command(
    scenario: str,
    step_index: int | None,
    pod_ref: str | None,
    output: str,
    no_search: bool,
    search_time: float | None,
    picture: bool | None,
) -> None:
    """Explain each admission of SCENARIO ('-': standard input): hints,
    merge, pools, rejection and what would fit."""

    def go() -> str:
        loaded = load_scenario(scenario)
        note_not_modelled(loaded.config, loaded.name)
        # one step or pod: the run keeps the node just before it for the search
        prepared = run_for_explain(
            loaded, step=None if no_search else step_index, pod=None if no_search else pod_ref
        )
        result = prepared.run
        with progress_bar("explaining admissions") as advance:
            doc = explain_run(
                loaded, result, step=step_index, pod=pod_ref, search=not no_search,
                progress=advance, snapshots=prepared.snapshots, time_budget=search_time,
            )
        if (step_index is not None or pod_ref is not None) and not doc["admissions"]:
            what = []
            if step_index is not None:
                what.append(f"step {step_index}")
            if pod_ref is not None:
                what.append(f"pod {pod_ref}")
            raise InputError(f"no addPod step matches {' and '.join(what)}", file=input_name(scenario))
        if output == "json":
            return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        if output == "yaml":
            return dump_yaml(doc)
        # the text renderers (and rich) are imported for text output only
        from podnuma.render.explain import render_text
        from podnuma.render.table import capture

        show = picture if picture is not None else len(doc["admissions"]) == 1
        pictures = _pictures(result, doc) if show else None
        return capture(lambda console: render_text(doc, console, pictures=pictures))

    text = guard(go)
    guard(lambda: echo(text))


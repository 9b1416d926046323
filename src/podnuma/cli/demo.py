"""``podnuma demo``: the embedded demo scenarios."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from podnuma.cli.app import guard
from podnuma.cli.options import checkpoint_option, echo, output_option
from podnuma.cli.simulate import OUTPUTS, format_run
from podnuma.fileio import write_checkpoint_dir
from podnuma.inputs.scenario import load_scenario_text
from podnuma.render.side_by_side import pod_level_demo_text
from podnuma.scenario.document import build_document, dump_json, dump_yaml, step_document
from podnuma.scenario.run import RunResult, run_scenario

__all__ = ["DEMO_NAME", "POD_LEVEL_DEMO_NAME", "demo_command", "demo_text"]

DEMO_NAME = "demo.yaml"
POD_LEVEL_DEMO_NAME = "pod-level.yaml"


def demo_text(name: str = DEMO_NAME) -> str:
    """An embedded demo scenario."""
    return (resources.files("podnuma.scenario") / "demo" / name).read_text(encoding="utf-8")


def _run(name: str) -> RunResult:
    return run_scenario(load_scenario_text(demo_text(name), name=name, base_dir=Path.cwd()))


def _format(result: RunResult, pod_level: RunResult, output: str) -> str:
    if output in ("table", "wide"):
        return format_run(result, output) + pod_level_demo_text(pod_level)
    doc = build_document(result)
    doc["podLevelDemo"] = {
        "perContainer": step_document(pod_level.steps[0]),
        "podLevel": step_document(pod_level.steps[2]),
    }
    return dump_json(doc) if output == "json" else dump_yaml(doc)


@click.command("demo")
@output_option(OUTPUTS, "table", "table (wide: every column) for people; json or yaml for the "
               "output document.")
@checkpoint_option
def demo_command(output: str, checkpoint_dir: Path | None) -> None:
    """Run the embedded demo: a two-socket node, a handful of pods, then a
    training pod per-container and with pod-level resources, side by side."""

    def go() -> str:
        result = _run(DEMO_NAME)
        pod_level = _run(POD_LEVEL_DEMO_NAME)
        text = _format(result, pod_level, output)
        if checkpoint_dir is not None:
            write_checkpoint_dir(checkpoint_dir, result.checkpoint_files)
        return text

    text = guard(go)
    guard(lambda: echo(text))

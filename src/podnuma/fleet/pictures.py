"""The drill-down of a fleet report: which nodes get a section of their
own, and each one's topology picture (the node's pods replayed as they
run, every CPU coloured by its owner)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.fleet.inputs import FleetInputs
from podnuma.fleet.replay import node_run_result
from podnuma.render.fleet import top_nodes
from podnuma.render.picture import ownership_after, render_svg

__all__ = ["MAX_PICTURES", "drill_down", "drill_down_nodes"]

#: Nodes drawn in the drill-down (with their topology picture).
MAX_PICTURES = 60


def drill_down_nodes(report: Mapping[str, Any], limit: int = MAX_PICTURES) -> list[str]:
    """Every node of a small fleet; else the nodes with the most
    sidecar-pinned CPUs, then those with errors and with warnings."""
    nodes: Sequence[Mapping[str, Any]] = report["nodes"]
    if len(nodes) <= limit:
        return [str(n["name"]) for n in nodes]
    chosen = [str(n["name"]) for n in top_nodes(report, limit // 2)]
    chosen += [str(n["name"]) for n in nodes if n["status"] == "error"][: limit // 4]
    chosen += [str(n["name"]) for n in nodes if n["status"] == "warning"][: limit // 4]
    return sorted(set(chosen))


def drill_down(
    inputs: FleetInputs, report: Mapping[str, Any], limit: int = MAX_PICTURES
) -> tuple[dict[str, str], list[str]]:
    """The drill-down nodes and the SVG picture of each one that can be
    replayed (node name -> SVG)."""
    drill = drill_down_nodes(report, limit)
    specs = {s.name: s for s in inputs.nodes}
    pics: dict[str, str] = {}
    for name in drill:
        spec = specs.get(name)
        if spec is None:
            continue
        result = node_run_result(spec)
        if result is None or not result.steps:
            continue
        pics[name] = render_svg(result.machine, ownership_after(result))
    return pics, drill

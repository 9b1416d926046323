"""``Node(step_pod_resources=False)`` (the fleet replay's lean mode) decides
exactly as the default node: every example scenario is played both ways and
the step results agree on everything but the per-step PodResources list,
which the lean node leaves empty while its ``pod_resources()`` still answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.container_manager import Node
from podnuma.errors import PodnumaError
from podnuma.inputs.scenario import load_scenario
from podnuma.scenario.run import play_step

from ..records import replace

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").rglob("*.yaml"))


def _scenarios() -> list[Path]:
    out = []
    for path in EXAMPLES:
        text = path.read_text()
        if "kind: Scenario" in text:
            out.append(path)
    return out


def _pair(scenario: Any, step_hints: bool = True) -> tuple[Node, Node]:
    """The scenario's node as ``simulate`` builds it, and a lean one
    (``step_pod_resources=False``, and ``step_hints``); skips a scenario whose
    kubelet does not start."""
    try:
        full = Node(scenario.machine, scenario.config, cpu_checkpoint=scenario.cpu_checkpoint,
                    memory_checkpoint=scenario.memory_checkpoint)
        other = Node(scenario.machine, scenario.config, cpu_checkpoint=scenario.cpu_checkpoint,
                     memory_checkpoint=scenario.memory_checkpoint, step_pod_resources=False,
                     step_hints=step_hints)
    except PodnumaError:
        pytest.skip("the scenario's kubelet does not start")
    return full, other


@pytest.mark.parametrize("path", _scenarios(), ids=lambda p: p.name)
def test_lean_node_decides_the_same(path: Path) -> None:
    scenario = load_scenario(path)
    full, lean = _pair(scenario)
    compared = 0
    for step in scenario.steps:
        try:
            a = play_step(full, step)
        except PodnumaError:
            with pytest.raises(PodnumaError):
                play_step(lean, step)
            break
        b = play_step(lean, step)
        assert b.pod_resources == ()
        assert replace(a, pod_resources=()) == b
        assert lean.pod_resources() == full.pod_resources() == a.pod_resources
        compared += 1
    assert compared > 0


@pytest.mark.parametrize("path", _scenarios(), ids=lambda p: p.name)
def test_node_without_step_hints_decides_the_same(path: Path) -> None:
    """``step_hints=False`` as well (what the fleet replay runs): the same
    decisions, with no hint or merge records in the step results."""
    scenario = load_scenario(path)
    full, lean = _pair(scenario, step_hints=False)
    compared = 0
    for step in scenario.steps:
        try:
            a = play_step(full, step)
        except PodnumaError:
            with pytest.raises(PodnumaError):
                play_step(lean, step)
            break
        b = play_step(lean, step)
        assert (b.pod_resources, b.hints, b.merged) == ((), (), ())
        assert replace(a, pod_resources=(), hints=(), merged=()) == b
        compared += 1
    assert compared > 0


def test_the_lean_results_drop_hints_the_full_ones_carry() -> None:
    """(The comparison above is not empty: some example admits a pod
    through a topology policy that merges hints.)"""
    with_hints = 0
    for path in _scenarios():
        scenario = load_scenario(path)
        try:
            node = Node(scenario.machine, scenario.config, cpu_checkpoint=scenario.cpu_checkpoint,
                        memory_checkpoint=scenario.memory_checkpoint)
        except PodnumaError:
            continue
        for step in scenario.steps:
            try:
                r = play_step(node, step)
            except PodnumaError:
                break
            with_hints += bool(r.hints and r.merged)
    assert with_hints > 0

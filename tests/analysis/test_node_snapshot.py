"""A node snapshot (what the nearest-admissible search tries each change
on) gives copies that behave as deep copies of the node: each plays on as
the node itself would, none disturbs another or the node, and they share
the machine and the configuration rather than copying them."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnuma.analysis import nearest
from podnuma.analysis.nearest import NodeSnapshot, copy_node, shared_objects
from podnuma.inputs.scenario import load_scenario
from podnuma.scenario.run import play_step, start_node

ROOT = Path(__file__).resolve().parents[2]
#: the third holds device allocations (immutable entries, shared by copies)
SCENARIOS = (
    "examples/static-dual-socket.yaml",
    "examples/pod-level/full-pcpus-only.yaml",
    "examples/topology/single-numa-node.yaml",
)


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.parametrize("unpicklable", [False, True], ids=["pickled", "deep-copied"])
@pytest.mark.parametrize("pod_resources", [False, True], ids=["lean", "podresources"])
def test_copies_play_on_as_the_node_does(
    name: str, unpicklable: bool, pod_resources: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if unpicklable:  # the fallback: a node that cannot be written out
        def refuse(self: object, obj: object) -> None:
            raise TypeError("cannot pickle")

        monkeypatch.setattr(nearest._Freezer, "dump", refuse)
    scenario = load_scenario(ROOT / name)
    steps = scenario.steps
    cut = len(steps) // 2
    assert 0 < cut < len(steps)
    node = start_node(scenario, step_pod_resources=pod_resources)
    for step in steps[:cut]:
        play_step(node, step)
    shared = shared_objects(scenario.machine, scenario.config)
    snapshot = NodeSnapshot(node, shared)
    assert (snapshot._node is not None) == unpicklable
    reference = copy_node(node, shared)
    first, second = snapshot.thaw(), snapshot.thaw()
    assert first is not second and first is not node
    for copy in (first, second):
        assert copy.machine is scenario.machine and copy.config is scenario.config
    expected = [play_step(reference, s) for s in steps[cut:]]
    assert [play_step(first, s) for s in steps[cut:]] == expected
    # the first copy played on: the second, a third and the node are as they were
    assert [play_step(second, s) for s in steps[cut:]] == expected
    third = snapshot.thaw()
    assert [play_step(third, s) for s in steps[cut:]] == expected
    assert [play_step(node, s) for s in steps[cut:]] == expected

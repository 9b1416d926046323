"""The harness's own rules, without either engine: the random-device-pick
normalisation and the shrinker's diff signature."""

from __future__ import annotations

import copy
from typing import Any

from tests.oracle.harness import Outcome, compare
from tests.oracle.shrink import signature

SCENARIO: dict[str, Any] = {
    "node": {
        "devices": {
            "example.com/gpu": [
                {"id": "gpu0", "numaNodes": [1]},
                {"id": "gpu1", "numaNodes": [3]},
                {"id": "gpu2", "numaNodes": [0]},
            ]
        }
    }
}


def _container(name: str, gpus: list[str], numa: list[int] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "type": "app",
        "cpus": "0-1",
        "mems": [0, 1],
        "isolation": "pod",
        "memory": [],
        "devices": {"example.com/gpu": gpus},
        "topologyHint": {"numaNodes": [0, 1] if numa is None else numa, "preferred": True},
    }


def _doc(first: list[str], second: list[str], later_cpus: str = "4") -> dict[str, Any]:
    step0 = {
        "index": 0, "op": "addPod", "pod": "ns/p0", "podUID": "u0", "admitted": True,
        "reason": None, "message": None, "qosClass": "Guaranteed", "podAllocation": None,
        "containers": [_container("c1", first), _container("c2", second)], "defaultCpuSet": "2-7",
    }
    step1 = copy.deepcopy(step0)
    step1.update(index=1, pod="ns/p1", podUID="u1", containers=[], defaultCpuSet=later_cpus)
    return {"node": {"name": "n"}, "steps": [step0, step1], "checkpoints": {}}


# step 0 admits a pod whose regular init container holds a device: the
# device manager hands it on by ranging over a Go set
REUSING: dict[str, Any] = {
    **SCENARIO,
    "steps": [{"addPod": {"metadata": {"name": "p0"}, "spec": {
        "initContainers": [{"name": "i", "resources": {"limits": {"example.com/gpu": "1"}}}],
        "containers": [{"name": "c1"}, {"name": "c2"}]}}}],
}


def test_swapped_picks_when_init_devices_are_reused_are_chance() -> None:
    notes: list[str] = []
    mine = Outcome(doc=_doc(["gpu2"], ["gpu0"]))
    theirs = Outcome(doc=_doc(["gpu0"], ["gpu2"], later_cpus="5"))
    assert compare(mine, theirs, REUSING, notes=notes) == []
    assert notes == ["random device pick at step 0: later steps not compared"]


def test_swapped_picks_are_a_mismatch_where_the_plugin_decides() -> None:
    # no devices to reuse: the oracle's plugin makes the pick, by the node's
    # device order, so ids are compared
    mine = Outcome(doc=_doc(["gpu2"], ["gpu0"]))
    theirs = Outcome(doc=_doc(["gpu0"], ["gpu2"], later_cpus="5"))
    diffs = compare(mine, theirs, SCENARIO)
    assert any("devices" in d for d in diffs)


def test_a_pick_outside_the_affinity_is_a_mismatch() -> None:
    # gpu1 sits on NUMA node 3, outside the mask {0, 1}: not an equivalent pick
    mine = Outcome(doc=_doc(["gpu2"], ["gpu0"]))
    theirs = Outcome(doc=_doc(["gpu1"], ["gpu2"]))
    diffs = compare(mine, theirs, SCENARIO)
    assert any("devices" in d for d in diffs)


def test_an_earlier_difference_is_not_excused() -> None:
    mine = _doc(["gpu2"], ["gpu0"])
    theirs = _doc(["gpu0"], ["gpu2"])
    theirs["steps"][0]["containers"][0]["cpus"] = "0,2"
    diffs = compare(Outcome(doc=mine), Outcome(doc=theirs), SCENARIO)
    assert any(".cpus" in d for d in diffs)


def test_same_picks_leave_later_steps_compared() -> None:
    diffs = compare(Outcome(doc=_doc(["gpu2"], ["gpu0"])), Outcome(doc=_doc(["gpu2"], ["gpu0"], later_cpus="5")), SCENARIO)
    assert diffs == ['.steps[1].defaultCpuSet: podnuma "4" != oracle "5"']


def test_signature_drops_indices() -> None:
    sig = signature([
        '.steps[0].containers[3].devices.example.com/gpu[0]: podnuma "(0,)" != oracle "(1,)"',
        "outcome: podnuma input (x) != oracle startup (y)",
    ])
    assert sig == {".steps[].containers[].devices.example.com/gpu[]", "outcome"}


def _memory_state(entries: dict[str, Any]) -> dict[str, Any]:
    return {"state": {"memoryManager": {"policyName": "Static", "machineState": {}, "entries": entries}}}


def _block(numa: list[int]) -> dict[str, Any]:
    return {"numaAffinity": numa, "type": "memory", "size": 1 << 30}


def test_memory_check_order_dependent_when_a_node_sits_in_two_groups() -> None:
    from tests.oracle.harness import MEMORY_STATE_DIFFERS, memory_validation_depends_on_order

    mixed = _memory_state({"a": {"c0": [_block([0, 1])]}, "b": {"c0": [_block([1])]}})
    same = _memory_state({"a": {"c0": [_block([0, 1])]}, "b": {"c0": [_block([0, 1])], "c1": [_block([2])]}})
    assert memory_validation_depends_on_order(mixed)
    assert not memory_validation_depends_on_order(same)
    refused = Outcome(kind="startup", message="start memory manager error: " + MEMORY_STATE_DIFFERS)
    started = Outcome(doc={"node": {}, "steps": [], "checkpoints": {}})
    notes: list[str] = []
    assert compare(started, refused, mixed, notes=notes) == []
    assert notes == ["memory state check depends on map order"]
    assert compare(started, refused, same) != []


def test_map_order_start_then_a_step_error_is_accepted() -> None:
    from tests.oracle.harness import MEMORY_STATE_DIFFERS

    mixed = _memory_state({"a": {"c0": [_block([0, 1])]}, "b": {"c0": [_block([1])]}})
    refused = Outcome(kind="startup", message="start memory manager error: " + MEMORY_STATE_DIFFERS)
    step_error = Outcome(kind="input", message="error: f.json: steps[6].removeContainer.pod: pod 'u' is not running on the node")
    node_error = Outcome(kind="input", message="error: f.json: node.machineInfo: bad")
    assert compare(refused, step_error, mixed) == []
    assert compare(refused, node_error, mixed) != []

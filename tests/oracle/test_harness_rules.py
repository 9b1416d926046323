"""The harness's own rules, without either engine: the random-device-pick
normalisation and the shrinker's diff signature."""

from __future__ import annotations

import copy
import json
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


def test_a_pod_podnuma_refuses_and_the_kubelet_admits_is_a_mismatch() -> None:
    from tests.oracle.harness import Outcome, compare

    mine = Outcome(kind="input", message=(
        's.json: steps[0].addPod.spec.containers[0].resources.requests: Invalid value: "2": '
        "must be less than or equal to cpu limit of 1"))
    assert compare(mine, Outcome(doc={"node": {}, "steps": []}), {"steps": []})


def test_pod_refusal_reads_the_step_and_the_field_error() -> None:
    from tests.oracle.harness import pod_refusal

    assert pod_refusal(
        's.yaml: steps[12].addPod.spec.containers[0].name: Duplicate value: "c" (line 3, column 9)'
    ) == (12, 'spec.containers[0].name: Duplicate value: "c"')
    assert pod_refusal("error: s.yaml: steps[2].addPod: invalid pod: json: unknown field") == (
        2, "invalid pod: json: unknown field")
    assert pod_refusal("s.yaml: steps[2].removePod: pod 'x' is not running on the node") is None


def _rejected(resource: str) -> dict[str, Any]:
    return {"node": {}, "steps": [{
        "index": 0, "op": "addPod", "pod": "ns/p", "admitted": False, "reason": f"OutOf{resource}",
        "message": f"Pod was rejected: Node didn't have enough resource: {resource}, requested: 1, used: 0, capacity: 0",
    }]}


def test_two_missing_scalar_resources_the_pod_requests_are_map_order() -> None:
    from tests.oracle.harness import Outcome, compare

    pod = {"spec": {"containers": [{"name": "c", "resources": {"limits": {
        "example.com/gpu": "1", "hugepages-2Mi": "2Mi", "memory": "1Gi"}}}]}}
    scenario = {"steps": [{"addPod": pod}]}
    notes: list[str] = []
    assert not compare(Outcome(doc=_rejected("hugepages-2Mi")), Outcome(doc=_rejected("example.com/gpu")),
                       scenario, notes=notes)
    assert notes == ["scalar resource fit order at step 0"]
    # memory is checked before the map: a difference there is a mismatch
    assert compare(Outcome(doc=_rejected("memory")), Outcome(doc=_rejected("example.com/gpu")), scenario)
    # a resource the pod does not request cannot be the other run's answer
    assert compare(Outcome(doc=_rejected("example.com/nic")), Outcome(doc=_rejected("example.com/gpu")), scenario)


def _device_checkpoint(c2: list[str], init_uid: str = "u0") -> bytes:
    entries = [
        {"PodUID": "u0", "ContainerName": "c2", "ResourceName": "example.com/gpu", "DeviceIDs": {"1": c2},
         "AllocResp": ""},
        {"PodUID": init_uid, "ContainerName": "i", "ResourceName": "example.com/gpu",
         "DeviceIDs": {"1": ["gpu0", "gpu1"]}, "AllocResp": ""},
    ]  # fmt: skip
    data = {"PodDeviceEntries": entries, "RegisteredDevices": {"example.com/gpu": ["gpu0", "gpu1", "gpu2"]}}
    return json.dumps({"Data": data, "Checksum": hash(tuple(c2)) & 0xFFFF}).encode()


def _with_devices(c2: list[str], init_uid: str = "u0") -> Outcome:
    doc = _doc(["gpu2"], c2)
    return Outcome(doc=doc, files={"device-plugins/kubelet_internal_checkpoint": _device_checkpoint(c2, init_uid)})


REUSING_UID: dict[str, Any] = {
    **SCENARIO,
    "steps": [{"addPod": {"metadata": {"name": "p0", "uid": "u0"}, "spec": {
        "initContainers": [{"name": "i", "resources": {"limits": {"example.com/gpu": "2"}}}],
        "containers": [{"name": "c1"}, {"name": "c2", "resources": {"limits": {"example.com/gpu": "1"}}}]}}}],
}


def test_a_reuse_pick_the_documents_count_is_chance_in_the_device_checkpoint() -> None:
    # devices compared by count in the documents (no NUMA affinity stored,
    # topology manager policy none): the pick among the init container's
    # devices shows only in the checkpoint file
    notes: list[str] = []
    mine, theirs = _with_devices(["gpu0"]), _with_devices(["gpu1"])
    theirs.doc = mine.doc
    assert compare(mine, theirs, REUSING_UID, check_bytes=True, notes=notes) == []
    assert notes == ["random device pick (a regular init container's devices handed on): "
                     "device checkpoint compared up to it"]


def test_a_device_checkpoint_difference_without_reuse_is_a_mismatch() -> None:
    # no regular init container holding devices: the plugin decides
    mine, theirs = _with_devices(["gpu0"]), _with_devices(["gpu1"])
    theirs.doc = mine.doc
    diffs = compare(mine, theirs, SCENARIO | {"steps": [{"addPod": {"metadata": {"uid": "u0"}}}]}, check_bytes=True)
    assert any("kubelet_internal_checkpoint" in d for d in diffs)
    # a device outside the init container's: not one of its devices handed on
    other = _with_devices(["gpu2"])
    other.doc = mine.doc
    diffs = compare(mine, other, REUSING_UID, check_bytes=True)
    assert any("kubelet_internal_checkpoint" in d for d in diffs)

"""KEP-5526 (pod-level resource managers) examples, end to end through
``podnuma simulate -o json``.

Every scenario of ``examples/pod-level/`` runs through the real command line
(click's runner). Each step's expected outcome is derived by hand from the
KEP, the kubernetes.io pages and the v1.37 kubelet code, with
the reasoning in comments -- not copied from podnuma's output. Where the KEP
or the docs and the code disagree, the expectation follows the code and the
comment says so.

The node of most examples ("kep-node"): 2 sockets x 1 NUMA node x 8 cores,
no SMT, 16Gi per NUMA node:

    NUMA 0: CPUs 0-7    NUMA 1: CPUs 8-15    reservedSystemCPUs: 0

so CPUs 1-7 of NUMA 0 are free, which reproduces the KEP tables' ids
({1,2,3}, {4}, {5} on NUMA 0). Memory: 1Gi reserved on NUMA 0 (kubeReserved
924Mi + eviction 100Mi), so 15Gi allocatable there and 16Gi on NUMA 1.

Picker facts used throughout (v1.37 cpumanager, packed picker, no SMT: every
core is one CPU): an N-CPU take from a set of free single-CPU cores returns
the N lowest ids of the set. Hints: narrowest preferred mask wins, lowest
NUMA id first, so a pod that fits NUMA 0 lands on NUMA 0.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pod-level"
GI = 1 << 30
ALL_NUMA = [0, 1]
REJECTED = "Pod was rejected: "  # the kubelet's prefix of the pod status message
POD_SCOPE_TOPOLOGY_ERROR = (
    REJECTED
    + "Pod Scope pod with pod-level resources failed admission under pod-scope topology manager"
)
EMPTY_POOL_CPU = (
    REJECTED + "pod rejected, sum of exclusive container cpu requests equals pod budget, "
    "leaving no cpus for shared containers"
)

# -- running ---------------------------------------------------------------------


def _invoke(path: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        cli, ["simulate", str(path), "-o", "json", "--detail", *extra], catch_exceptions=False
    )


def simulate(path: Path) -> dict[str, Any]:
    result = _invoke(path)
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    return doc


def simulate_doc(doc: dict[str, Any], tmp_path: Path, name: str = "variant.yaml") -> dict[str, Any]:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return simulate(path)


def variant(name: str, **config: Any) -> dict[str, Any]:
    """An example with some kubeletConfig fields replaced."""
    doc = copy.deepcopy(load(name))
    doc["kubeletConfig"].update(config)
    return doc


def cpu_pod_entries(cpu: dict[str, Any]) -> Any:
    """The CPU checkpoint's pod entries: only in its ``data`` payload (V4)."""
    return json.loads(cpu["data"]).get("podEntries", {})


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


# -- assertions ------------------------------------------------------------------


def mem(size_gi: int, numa: list[int]) -> dict[str, Any]:
    return {"type": "memory", "numaNodes": numa, "size": size_gi * GI}


def podres_mem(size_gi: int, numa: list[int]) -> dict[str, Any]:
    return {
        "memoryType": "memory",
        "size": size_gi * GI,
        "topology": {"nodes": [{"ID": n} for n in numa]},
    }


def containers(step: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in step["containers"]}


def expect_admitted(step: dict[str, Any], qos: str = "Guaranteed") -> None:
    assert step["admitted"] is True, (step["reason"], step["message"])
    assert step["reason"] is None and step["message"] is None
    assert step["rejectedAt"] is None
    assert step["qosClass"] == qos


def expect_rejected(step: dict[str, Any], reason: str, message: str, stage: str) -> None:
    assert step["admitted"] is False
    assert step["reason"] == reason
    assert step["message"] == message
    assert step["rejectedAt"]["stage"] == stage
    assert step["podAllocation"] is None
    assert step["containers"] == []


def expect_container(
    step: dict[str, Any],
    name: str,
    *,
    cpus: str,
    isolation: str,
    memory: list[dict[str, Any]] | None = None,
    hint: list[int] | None | str = "skip",
    ctype: str = "app",
) -> None:
    """One container's row. CFS quota is off exactly for exclusive CPUs
    (isolation "container"); mems are the NUMA nodes of the memory blocks, or
    every node without blocks."""
    c = containers(step)[name]
    assert c["type"] == ctype, name
    assert c["cpus"] == cpus, name
    assert c["isolation"] == isolation, name
    assert c["cpuQuotaDisabled"] is (isolation == "container"), name
    blocks = memory or []
    assert c["memory"] == blocks, name
    assert c["mems"] == (sorted({n for b in blocks for n in b["numaNodes"]}) or ALL_NUMA), name
    if hint != "skip":
        assert c["topologyHint"] == {"numaNodes": hint, "preferred": True}, name


def expect_pod_allocation(step: dict[str, Any], cpus: str, memory: list[dict[str, Any]]) -> None:
    assert step["podAllocation"] == {"cpus": cpus, "memory": memory}


def podresources(step: dict[str, Any], name: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [p for p in step["podResources"] if p["name"] == name]
    assert len(found) == 1, name
    return found[0]


def expect_podresources(
    step: dict[str, Any],
    pod: str,
    *,
    cpu_ids: list[int],
    memory: list[dict[str, Any]],
    containers_: dict[str, tuple[list[int], list[dict[str, Any]]]],
) -> None:
    """PodResources List: pod-level cpu_ids / memory = the pod's reservation
    (pod scope, gate on), empty otherwise; a container lists only its own
    exclusive CPUs / memory ("container" isolation), never a shared pool."""
    pr = podresources(step, pod)
    assert pr["cpuIds"] == cpu_ids
    assert pr["memory"] == memory
    got = {c["name"]: (c["cpuIds"], c["memory"]) for c in pr["containers"]}
    assert got == containers_


# -- pod scope: KEP examples ---------------------------------------------------------


def test_pod_scope_1_shared_pool_only() -> None:
    out = simulate(EXAMPLES / "pod-scope-1-shared.yaml")
    (s,) = out["steps"]
    expect_admitted(s)
    # Budget 4 CPUs on the narrowest preferred NUMA node (0): the 4 lowest
    # free CPUs 1-4. No exclusive slice -> the pod shared pool is the whole
    # bubble, and every container runs on it, isolation "pod", quota on.
    # Memory: one 4Gi pod block on NUMA 0; each shared container holds the
    # pool = budget - exclusive blocks = 4Gi.
    expect_pod_allocation(s, "1-4", [mem(4, [0])])
    for name in ("container-1", "container-2", "container-3"):
        expect_container(s, name, cpus="1-4", isolation="pod", memory=[mem(4, [0])], hint=[0])
    assert s["defaultCpuSet"] == "0,5-15"
    # One pod-level merge (container None), admitted, on NUMA 0.
    assert s["mergedHints"] == [
        {"container": None, "hint": {"numaNodes": [0], "preferred": True}, "admit": True}
    ]
    expect_podresources(
        s,
        "pod-scope-shared",
        cpu_ids=[1, 2, 3, 4],
        memory=[podres_mem(4, [0])],
        containers_={n: ([], []) for n in ("container-1", "container-2", "container-3")},
    )
    # Checkpoints: every container has an entry (the pool), plus the pod entry.
    cpu = out["checkpoints"]["cpuManager"]
    uid = s["podUID"]
    assert cpu["defaultCpuSet"] == "0,5-15"
    assert cpu.get("entries", {}) == {
        uid: {"container-1": "1-4", "container-2": "1-4", "container-3": "1-4"}
    }
    assert cpu_pod_entries(cpu) == {uid: {"cpuSet": "1-4"}}
    # v4: the embedded V2 checkpoint at the top (no podEntries, V2 checksum),
    # payload in data, dataChecksum = FNV-32a of "(string)" + data.
    assert "podEntries" not in cpu and cpu["checksum"] != 0
    assert json.loads(cpu["data"])["podEntries"] == {uid: {"cpuSet": "1-4"}}
    assert cpu["dataChecksum"] == fnv32a(("(string)" + cpu["data"]).encode())
    memory = out["checkpoints"]["memoryManager"]
    data = json.loads(memory["data"])
    block4 = [{"numaAffinity": [0], "type": "memory", "size": 4 * GI}]
    assert data["podEntries"] == {uid: {"memoryBlocks": block4}}
    assert memory["entries"] == {
        uid: {n: block4 for n in ("container-1", "container-2", "container-3")}
    }
    # The machine state is charged once, with the pod budget (not 3 x 4Gi).
    node0 = memory["machineState"]["0"]["memoryMap"]["memory"]
    assert node0["reserved"] == 4 * GI
    assert node0["free"] == 15 * GI - 4 * GI


def test_pod_scope_2_mixed() -> None:
    out = simulate(EXAMPLES / "pod-scope-2-mixed.yaml")
    (s,) = out["steps"]
    expect_admitted(s)
    # Bubble 1-4; container-1's 2-CPU slice = the 2 lowest of the bubble;
    # the rest (3-4) is the pod shared pool of container-2/3.
    expect_pod_allocation(s, "1-4", [mem(4, [0])])
    expect_container(
        s, "container-1", cpus="1-2", isolation="container", memory=[mem(2, [0])], hint=[0]
    )
    for name in ("container-2", "container-3"):
        expect_container(s, name, cpus="3-4", isolation="pod", memory=[mem(2, [0])], hint=[0])
    assert s["defaultCpuSet"] == "0,5-15"
    # PodResources: container-1's CPUs appear at pod and container level.
    expect_podresources(
        s,
        "pod-scope-mixed",
        cpu_ids=[1, 2, 3, 4],
        memory=[podres_mem(4, [0])],
        containers_={
            "container-1": ([1, 2], [podres_mem(2, [0])]),
            "container-2": ([], []),
            "container-3": ([], []),
        },
    )
    cpu = out["checkpoints"]["cpuManager"]
    assert cpu.get("entries", {}) == {
        s["podUID"]: {"container-1": "1-2", "container-2": "3-4", "container-3": "3-4"}
    }
    assert cpu_pod_entries(cpu) == {s["podUID"]: {"cpuSet": "1-4"}}


def test_pod_scope_3_empty_shared_pool_restricted() -> None:
    out = simulate(EXAMPLES / "pod-scope-3-empty-shared-pool.yaml")
    (s,) = out["steps"]
    # 3 + 2 >= 5 with a shared container-3: the CPU manager's pod hints are
    # an empty list -> restricted cannot admit -> the pod-level
    # TopologyAffinityError (message as the tutorial shows it).
    expect_rejected(s, "TopologyAffinityError", POD_SCOPE_TOPOLOGY_ERROR, "topology")
    cpu_hints = [h for h in s["providerHints"] if h["provider"] == "cpu"]
    assert cpu_hints == [{"container": None, "provider": "cpu", "resource": "cpu", "hints": []}]
    # The memory manager runs the same check on its own: 3Gi + 2Gi >= 5Gi.
    mem_hints = [h for h in s["providerHints"] if h["provider"] == "memory"]
    assert mem_hints == [
        {"container": None, "provider": "memory", "resource": "memory", "hints": []}
    ]
    assert s["defaultCpuSet"] == "0-15"
    assert s["podResources"] == []
    assert out["checkpoints"]["cpuManager"].get("entries", {}) == {}
    assert cpu_pod_entries(out["checkpoints"]["cpuManager"]) == {}


def test_pod_scope_3_empty_shared_pool_best_effort(tmp_path: Path) -> None:
    # Under best-effort the empty hint list is merged and admitted; the CPU
    # manager's AllocatePod (first of the pod-level allocators after the
    # no-op device manager) rejects with its own error type and text.
    out = simulate_doc(
        variant("pod-scope-3-empty-shared-pool.yaml", topologyManagerPolicy="best-effort"), tmp_path
    )
    (s,) = out["steps"]
    expect_rejected(s, "EmptyPodSharedPoolError", EMPTY_POOL_CPU, "allocate:cpu")
    assert s["defaultCpuSet"] == "0-15"
    assert cpu_pod_entries(out["checkpoints"]["cpuManager"]) == {}


def test_pod_scope_3_empty_shared_pool_single_numa_node(tmp_path: Path) -> None:
    out = simulate_doc(
        variant("pod-scope-3-empty-shared-pool.yaml", topologyManagerPolicy="single-numa-node"),
        tmp_path,
    )
    expect_rejected(out["steps"][0], "TopologyAffinityError", POD_SCOPE_TOPOLOGY_ERROR, "topology")


def test_pod_scope_topology_policy_none(tmp_path: Path) -> None:
    # Policy none uses the none scope whatever the configured scope
    # (upstream NewManager, scope_none.go): no pod-level path, every
    # container goes through each provider's classic Allocate. With the gate
    # on, container-1 (eligible, 2 CPUs) gets 2 exclusive CPUs and 2Gi from
    # the NODE (no pod entry); the shared containers have no eligible memory
    # request, so the Static memory policy pins nothing for them. No hint is
    # stored: every container reads Go's zero hint.
    out = simulate_doc(variant("pod-scope-2-mixed.yaml", topologyManagerPolicy="none"), tmp_path)
    (s,) = out["steps"]
    expect_admitted(s)
    assert s["podAllocation"] is None
    expect_container(s, "container-1", cpus="1-2", isolation="container", memory=[mem(2, [0])])
    assert s["defaultCpuSet"] == "0,3-15"
    assert cpu_pod_entries(out["checkpoints"]["cpuManager"]) == {}
    assert out["checkpoints"]["cpuManager"].get("entries", {}) == {
        s["podUID"]: {"container-1": "1-2"}
    }


# -- pod scope: the KEP table ----------------------------------------------------------


def test_pod_scope_table() -> None:
    out = simulate(EXAMPLES / "pod-scope-table.yaml")
    steps = out["steps"]
    assert [s["op"] for s in steps] == ["addPod", "removePod"] * 4 + ["addPod"]
    for i in (1, 3, 5, 7):
        # every row starts from the empty node again
        assert steps[i]["defaultCpuSet"] == "0-15"
        assert steps[i]["containers"] == [] and steps[i]["podAllocation"] is None

    # Row 1, current behaviour: classic pod scope, pod sized 3+1+1 = 5 on
    # NUMA 0; containers allocated one after the other from the node:
    # {1,2,3}, {4}, {5}. No pod entry. Memory per container.
    r1 = steps[0]
    expect_admitted(r1)
    assert r1["podAllocation"] is None
    expect_container(r1, "c1", cpus="1-3", isolation="container", memory=[mem(3, [0])], hint=[0])
    expect_container(r1, "c2", cpus="4", isolation="container", memory=[mem(1, [0])], hint=[0])
    expect_container(r1, "c3", cpus="5", isolation="container", memory=[mem(1, [0])], hint=[0])
    assert r1["defaultCpuSet"] == "0,6-15"
    expect_podresources(
        r1,
        "row1-current",
        cpu_ids=[],
        memory=[],
        containers_={
            "c1": ([1, 2, 3], [podres_mem(3, [0])]),
            "c2": ([4], [podres_mem(1, [0])]),
            "c3": ([5], [podres_mem(1, [0])]),
        },
    )

    # Row 2, all Guaranteed: bubble {1..5}, slices {1,2,3}, {4}, {5}; no
    # shared container -> no pod shared pool, and that is allowed.
    r2 = steps[2]
    expect_admitted(r2)
    expect_pod_allocation(r2, "1-5", [mem(5, [0])])
    expect_container(r2, "c1", cpus="1-3", isolation="container", memory=[mem(3, [0])], hint=[0])
    expect_container(r2, "c2", cpus="4", isolation="container", memory=[mem(1, [0])], hint=[0])
    expect_container(r2, "c3", cpus="5", isolation="container", memory=[mem(1, [0])], hint=[0])
    assert r2["defaultCpuSet"] == "0,6-15"
    expect_podresources(
        r2,
        "row2-all-guaranteed",
        cpu_ids=[1, 2, 3, 4, 5],
        memory=[podres_mem(5, [0])],
        containers_={
            "c1": ([1, 2, 3], [podres_mem(3, [0])]),
            "c2": ([4], [podres_mem(1, [0])]),
            "c3": ([5], [podres_mem(1, [0])]),
        },
    )

    # Row 3, some Guaranteed: C1 {1,2,3}; C2, C3 the pool {4,5}; memory pool
    # 5 - 3 = 2Gi.
    r3 = steps[4]
    expect_admitted(r3)
    expect_pod_allocation(r3, "1-5", [mem(5, [0])])
    expect_container(r3, "c1", cpus="1-3", isolation="container", memory=[mem(3, [0])], hint=[0])
    expect_container(r3, "c2", cpus="4-5", isolation="pod", memory=[mem(2, [0])], hint=[0])
    expect_container(r3, "c3", cpus="4-5", isolation="pod", memory=[mem(2, [0])], hint=[0])
    expect_podresources(
        r3,
        "row3-some-guaranteed",
        cpu_ids=[1, 2, 3, 4, 5],
        memory=[podres_mem(5, [0])],
        containers_={"c1": ([1, 2, 3], [podres_mem(3, [0])]), "c2": ([], []), "c3": ([], [])},
    )

    # Row 4, none Guaranteed: everyone on {1..5}, 5Gi pool.
    r4 = steps[6]
    expect_admitted(r4)
    expect_pod_allocation(r4, "1-5", [mem(5, [0])])
    for name in ("c1", "c2", "c3"):
        expect_container(r4, name, cpus="1-5", isolation="pod", memory=[mem(5, [0])], hint=[0])
    expect_podresources(
        r4,
        "row4-none-guaranteed",
        cpu_ids=[1, 2, 3, 4, 5],
        memory=[podres_mem(5, [0])],
        containers_={"c1": ([], []), "c2": ([], []), "c3": ([], [])},
    )

    # Row 5, admission failure: 3 + 2 >= 5 with a shared C3 ->
    # single-numa-node: TopologyAffinityError, nothing allocated.
    r5 = steps[8]
    expect_rejected(r5, "TopologyAffinityError", POD_SCOPE_TOPOLOGY_ERROR, "topology")
    assert r5["defaultCpuSet"] == "0-15"
    cpu = out["checkpoints"]["cpuManager"]
    assert (
        cpu.get("entries", {}) == {}
        and cpu_pod_entries(cpu) == {}
        and cpu["defaultCpuSet"] == "0-15"
    )
    assert json.loads(out["checkpoints"]["memoryManager"]["data"]).get("podEntries", {}) == {}


# -- container scope ---------------------------------------------------------------------


def test_container_scope_1_mixed() -> None:
    out = simulate(EXAMPLES / "container-scope-1-mixed.yaml")
    (s,) = out["steps"]
    expect_admitted(s)
    # container-1: its own hint {0} and 2 exclusive CPUs from the node (1-2).
    # container-2/3: no hint from any provider -> merged default affinity,
    # which single-numa-node stores as nil; no CPU entry -> the default
    # cpuset, reserved CPU 0 included; isolation host. Memory policy None:
    # no blocks anywhere.
    assert s["podAllocation"] is None
    expect_container(s, "container-1", cpus="1-2", isolation="container", hint=[0])
    for name in ("container-2", "container-3"):
        expect_container(s, name, cpus="0,3-15", isolation="host", hint=None)
    assert s["defaultCpuSet"] == "0,3-15"
    expect_podresources(
        s,
        "container-scope-mixed",
        cpu_ids=[],
        memory=[],
        containers_={"container-1": ([1, 2], []), "container-2": ([], []), "container-3": ([], [])},
    )
    cpu = out["checkpoints"]["cpuManager"]
    assert cpu.get("entries", {}) == {s["podUID"]: {"container-1": "1-2"}}
    assert cpu_pod_entries(cpu) == {}


@pytest.mark.parametrize("policy", ["single-numa-node", "best-effort", "restricted"])
def test_container_scope_1_mixed_static_memory(tmp_path: Path, policy: str) -> None:
    # KEP and tutorial: admitted, and so is the v1.37.2 code: the Static
    # memory policy's Allocate returns early for a container without
    # (Guaranteed-equivalent) memory requests.
    doc = variant(
        "container-scope-1-mixed.yaml", memoryManagerPolicy="Static", topologyManagerPolicy=policy
    )
    out = simulate_doc(doc, tmp_path)
    (s,) = out["steps"]
    expect_admitted(s)
    expect_container(s, "container-1", cpus="1-2", isolation="container", memory=[mem(2, [0])], hint=[0])
    shared_hint = None if policy == "single-numa-node" else [0, 1]
    for name in ("container-2", "container-3"):
        expect_container(s, name, cpus="0,3-15", isolation="host", memory=[], hint=shared_hint)
    assert s["defaultCpuSet"] == "0,3-15"
    assert out["checkpoints"]["cpuManager"].get("entries", {}) == {
        s["podUID"]: {"container-1": "1-2"}
    }


def test_container_scope_2_pod_only() -> None:
    out = simulate(EXAMPLES / "container-scope-2-pod-only.yaml")
    (s,) = out["steps"]
    # Still Guaranteed (QoS from spec.resources), but nothing to align or
    # allocate in container scope: every container on the default set 0-15.
    expect_admitted(s)
    assert s["podAllocation"] is None
    for name in ("container-1", "container-2", "container-3"):
        expect_container(s, name, cpus="0-15", isolation="host", hint=None)
    assert s["defaultCpuSet"] == "0-15"
    expect_podresources(
        s,
        "container-scope-pod-only",
        cpu_ids=[],
        memory=[],
        containers_={n: ([], []) for n in ("container-1", "container-2", "container-3")},
    )
    assert out["checkpoints"]["cpuManager"].get("entries", {}) == {}


@pytest.mark.parametrize("policy", ["single-numa-node", "best-effort"])
def test_container_scope_2_pod_only_static_memory(tmp_path: Path, policy: str) -> None:
    # no container has Guaranteed-equivalent memory: the Static policy pins
    # nothing and every container runs on the node's shared pool
    doc = variant(
        "container-scope-2-pod-only.yaml", memoryManagerPolicy="Static", topologyManagerPolicy=policy
    )
    (s,) = simulate_doc(doc, tmp_path)["steps"]
    expect_admitted(s)
    hint_ = None if policy == "single-numa-node" else [0, 1]
    for name in ("container-1", "container-2", "container-3"):
        expect_container(s, name, cpus="0-15", isolation="host", memory=[], hint=hint_)


def test_container_scope_table() -> None:
    out = simulate(EXAMPLES / "container-scope-table.yaml")
    steps = out["steps"]
    for i in (1, 3, 5, 7):
        assert steps[i]["defaultCpuSet"] == "0-15"
    # Rows 1 and 2: each container its own hint {0} and its own CPUs from
    # the node: 1-3, 4, 5; no pod entry even for the pod-level pod.
    for i, pod in ((0, "row1-current"), (2, "row2-all-guaranteed")):
        s = steps[i]
        expect_admitted(s)
        assert s["podAllocation"] is None
        expect_container(s, "c1", cpus="1-3", isolation="container", hint=[0])
        expect_container(s, "c2", cpus="4", isolation="container", hint=[0])
        expect_container(s, "c3", cpus="5", isolation="container", hint=[0])
        assert s["defaultCpuSet"] == "0,6-15"
        assert [m["container"] for m in s["mergedHints"]] == ["c1", "c2", "c3"]
        expect_podresources(
            s,
            pod,
            cpu_ids=[],
            memory=[],
            containers_={"c1": ([1, 2, 3], []), "c2": ([4], []), "c3": ([5], [])},
        )
    # Row 3: C1 {1,2,3}; C2, C3 no preference -> node shared pool.
    s = steps[4]
    expect_admitted(s)
    assert s["podAllocation"] is None
    expect_container(s, "c1", cpus="1-3", isolation="container", hint=[0])
    expect_container(s, "c2", cpus="0,4-15", isolation="host", hint=None)
    expect_container(s, "c3", cpus="0,4-15", isolation="host", hint=None)
    # Row 4: nothing exclusive.
    s = steps[6]
    expect_admitted(s)
    for name in ("c1", "c2", "c3"):
        expect_container(s, name, cpus="0-15", isolation="host", hint=None)
    # Extra row: no empty-pool check in container scope: C1 1-3, C2 4-5
    # (the next 2 lowest of NUMA 0), C3 shared.
    s = steps[8]
    expect_admitted(s)
    expect_container(s, "c1", cpus="1-3", isolation="container", hint=[0])
    expect_container(s, "c2", cpus="4-5", isolation="container", hint=[0])
    expect_container(s, "c3", cpus="0,6-15", isolation="host", hint=None)
    cpu = out["checkpoints"]["cpuManager"]
    assert cpu.get("entries", {}) == {s["podUID"]: {"c1": "1-3", "c2": "4-5"}}
    assert cpu_pod_entries(cpu) == {}


# -- the kubernetes.io tutorial ----------------------------------------------------------


def test_tutorial_literal_kubelet_config_does_not_start(tmp_path: Path) -> None:
    # The tutorial's Step 1 config alone: static CPU policy without a CPU
    # reservation, Static memory policy without reservedMemory.
    doc = load("tutorial-1-pod-scope-mixed.yaml")
    doc["kubeletConfig"] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "featureGates": {"PodLevelResourceManagers": True},
        "cpuManagerPolicy": "static",
        "memoryManagerPolicy": "Static",
        "topologyManagerScope": "pod",
        "topologyManagerPolicy": "single-numa-node",
    }
    path = tmp_path / "literal.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = _invoke(path)
    assert result.exit_code == 2
    # upstream cpumanager NewManager (static policy, zero reservation)
    assert (
        "kubelet would not start: [cpumanager] unable to determine reserved CPU resources for static policy"
        in (result.stderr)
    )
    # With a CPU reservation added, the memory manager still refuses
    # (validateReservedMemory: the default eviction threshold is 100Mi).
    doc["kubeletConfig"]["reservedSystemCPUs"] = "0"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = _invoke(path)
    assert result.exit_code == 2
    assert (
        'kubelet would not start: the total amount "0" of type "memory" is not equal to the value "100Mi" '
        "determined by Node Allocatable feature"
    ) in result.stderr


def _expect_part_a(s: dict[str, Any]) -> None:
    # Bubble 1-4 on NUMA 0. The sidecars (restartable init containers
    # without resources) are skipped while partitioning and get the final
    # pool; main-app takes 1-2; pool 3-4.
    expect_admitted(s)
    expect_pod_allocation(s, "1-4", [mem(4, [0])])
    for name in ("metrics-sidecar", "logging-sidecar"):
        expect_container(
            s, name, cpus="3-4", isolation="pod", memory=[mem(2, [0])], hint=[0], ctype="sidecar"
        )
    expect_container(
        s, "main-app", cpus="1-2", isolation="container", memory=[mem(2, [0])], hint=[0]
    )
    expect_podresources(
        s,
        "pod-scope-mixed",
        cpu_ids=[1, 2, 3, 4],
        memory=[podres_mem(4, [0])],
        containers_={
            "metrics-sidecar": ([], []),
            "logging-sidecar": ([], []),
            "main-app": ([1, 2], [podres_mem(2, [0])]),
        },
    )


def test_tutorial_1_pod_scope_mixed() -> None:
    out = simulate(EXAMPLES / "tutorial-1-pod-scope-mixed.yaml")
    (s,) = out["steps"]
    assert s["pod"] == "plrm-tutorial/pod-scope-mixed"
    _expect_part_a(s)
    assert s["defaultCpuSet"] == "0,5-15"
    cpu = out["checkpoints"]["cpuManager"]
    assert cpu.get("entries", {}) == {
        s["podUID"]: {"metrics-sidecar": "3-4", "logging-sidecar": "3-4", "main-app": "1-2"}
    }
    assert cpu_pod_entries(cpu) == {s["podUID"]: {"cpuSet": "1-4"}}


def test_tutorial_2_empty_shared_pool() -> None:
    out = simulate(EXAMPLES / "tutorial-2-empty-shared-pool.yaml")
    a, b = out["steps"]
    _expect_part_a(a)
    # Sidecar 1 + main-app 3 = 4 = budget, logging-sidecar shared -> the
    # tutorial's Reason and Message exactly.
    expect_rejected(b, "TopologyAffinityError", POD_SCOPE_TOPOLOGY_ERROR, "topology")
    assert b["defaultCpuSet"] == "0,5-15"
    # Part A's pod is untouched and still listed.
    assert [p["name"] for p in b["podResources"]] == ["pod-scope-mixed"]
    assert cpu_pod_entries(out["checkpoints"]["cpuManager"]) == {
        a["podUID"]: {"cpuSet": "1-4"}
    }


def test_tutorial_2_checkpoints_are_tutorial_3_state() -> None:
    # tutorial-3 starts from the checkpoints tutorial-2 leaves behind.
    out = simulate(EXAMPLES / "tutorial-2-empty-shared-pool.yaml")
    state = load("tutorial-3-container-scope-mixed.yaml")["state"]
    assert state["cpuManager"] == out["checkpoints"]["cpuManager"]
    assert state["memoryManager"] == out["checkpoints"]["memoryManager"]


def test_tutorial_3_container_scope_mixed() -> None:
    out = simulate(EXAMPLES / "tutorial-3-container-scope-mixed.yaml")
    c, cleanup = out["steps"]
    part_a_uid = "2e551bac-0f03-508d-9749-d0a4eb13fec3"
    # Tutorial and code: Running. infrastructure-sidecar gets hint {0},
    # CPUs 5-6 (the 2 lowest of NUMA 0's free 5-7) and 2Gi on NUMA 0; the
    # workers pin nothing and run on the node's shared pool.
    expect_admitted(c)
    expect_container(
        c, "infrastructure-sidecar", cpus="5-6", isolation="container", memory=[mem(2, [0])], hint=[0],
        ctype="sidecar",
    )
    for name in ("worker-1", "worker-2"):
        expect_container(c, name, cpus="0,7-15", isolation="host", memory=[], hint=None)
    assert c["defaultCpuSet"] == "0,7-15"
    # Clean-up: Part A's pod (known from the checkpoint, named by uid) gives
    # back 1-4.
    assert cleanup["op"] == "removePod" and cleanup["podUID"] == part_a_uid
    assert cleanup["defaultCpuSet"] == "0-4,7-15"
    cpu = out["checkpoints"]["cpuManager"]
    assert cpu_pod_entries(cpu) == {}
    assert cpu.get("entries", {}) == {c["podUID"]: {"infrastructure-sidecar": "5-6"}}


def test_tutorial_3_with_memory_manager_none(tmp_path: Path) -> None:
    # What the tutorial describes, reachable with memoryManagerPolicy None:
    # sidecar exclusive 5-6 from the node, workers on the node shared pool
    # (which includes the reserved CPU 0), no pod entry.
    doc = variant("tutorial-3-container-scope-mixed.yaml", memoryManagerPolicy="None")
    doc["state"].pop("memoryManager")
    out = simulate_doc(doc, tmp_path)
    s = out["steps"][0]
    expect_admitted(s)
    assert s["podAllocation"] is None
    expect_container(
        s, "infrastructure-sidecar", cpus="5-6", isolation="container", hint=[0], ctype="sidecar"
    )
    for name in ("worker-1", "worker-2"):
        expect_container(s, name, cpus="0,7-15", isolation="host", hint=None)
    expect_podresources(
        s,
        "container-scope-mixed",
        cpu_ids=[],
        memory=[],
        containers_={
            "infrastructure-sidecar": ([5, 6], []),
            "worker-1": ([], []),
            "worker-2": ([], []),
        },
    )


# -- gates ------------------------------------------------------------------------------


def test_gates_off() -> None:
    out = simulate(EXAMPLES / "gates-off.yaml")
    mixed, no_pool, classic = out["steps"]
    # Gate off: pod-level pods admitted, Guaranteed (QoS from spec.resources),
    # nil hints from CPU and memory -> merged nil under single-numa-node, no
    # allocation: every container on 0-15, "host", no memory blocks.
    for s, names in ((mixed, ("c1", "c2", "c3")), (no_pool, ("c1", "c2", "c3"))):
        expect_admitted(s)
        assert s["podAllocation"] is None
        for name in names:
            expect_container(s, name, cpus="0-15", isolation="host", hint=None)
        assert s["defaultCpuSet"] == "0-15"
    # The empty-pool pod is not even validated.
    # A classic pod is managed as usual.
    expect_admitted(classic)
    expect_container(
        classic, "app", cpus="1-2", isolation="container", memory=[mem(2, [0])], hint=[0]
    )
    assert classic["defaultCpuSet"] == "0,3-15"
    # PodResources: no pod-level fields with the gate off.
    for pod in ("pod-level-mixed", "pod-level-no-pool"):
        expect_podresources(
            classic,
            pod,
            cpu_ids=[],
            memory=[],
            containers_={n: ([], []) for n in ("c1", "c2", "c3")},
        )
    expect_podresources(
        classic,
        "classic",
        cpu_ids=[],
        memory=[],
        containers_={"app": ([1, 2], [podres_mem(2, [0])])},
    )
    cpu = out["checkpoints"]["cpuManager"]
    assert cpu.get("entries", {}) == {classic["podUID"]: {"app": "1-2"}}
    assert cpu_pod_entries(cpu) == {}


def test_gate_default_is_off(tmp_path: Path) -> None:
    # The same scenario without the gate written out: identical (v1.37 default off).
    doc = load("gates-off.yaml")
    doc["kubeletConfig"]["featureGates"].pop("PodLevelResourceManagers")
    assert simulate_doc(doc, tmp_path)["steps"] == simulate(EXAMPLES / "gates-off.yaml")["steps"]


def test_gates_off_podlevelresources() -> None:
    out = simulate(EXAMPLES / "gates-off-podlevelresources.yaml")
    burstable, guaranteed = out["steps"]
    # spec.resources ignored: QoS from the containers.
    expect_admitted(burstable, qos="Burstable")
    assert burstable["podAllocation"] is None
    for name in ("c1", "c2"):
        expect_container(burstable, name, cpus="0-15", isolation="host")
    # Classic Guaranteed pod, pod scope sizes 3 + 1 = 4 on NUMA 0.
    expect_admitted(guaranteed)
    assert guaranteed["podAllocation"] is None
    expect_container(
        guaranteed, "c1", cpus="1-3", isolation="container", memory=[mem(3, [0])], hint=[0]
    )
    expect_container(
        guaranteed, "c2", cpus="4", isolation="container", memory=[mem(1, [0])], hint=[0]
    )
    assert guaranteed["defaultCpuSet"] == "0,5-15"


def test_plrm_needs_plr(tmp_path: Path) -> None:
    # Enabling PodLevelResourceManagers with PodLevelResources off: the
    # kubelet refuses to start (feature-gate dependency).
    doc = load("gates-off-podlevelresources.yaml")
    doc["kubeletConfig"]["featureGates"]["PodLevelResourceManagers"] = True
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = _invoke(path)
    assert result.exit_code == 2
    assert (
        "PodLevelResourceManagers is enabled, but depends on features that are disabled"
        in result.stderr
    )


def test_budget_rule_is_api_validation(tmp_path: Path) -> None:
    # KEP: "enforced by Kubelet admission control". Code: API-server
    # validation of pod-level resources, so podnuma treats it as invalid
    # input (exit 2), not as a rejected pod.
    doc = load("pod-scope-2-mixed.yaml")
    pod = doc["steps"][0]["addPod"]
    pod["spec"]["containers"][1]["resources"] = {"limits": {"cpu": "3", "memory": "1Gi"}}
    path = tmp_path / "over.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = _invoke(path)
    assert result.exit_code == 2
    assert "must be greater than or equal to aggregate container requests of 5" in result.stderr


# -- init containers, sidecars, ephemeral containers ---------------------------------------------


def test_init_and_sidecars() -> None:
    out = simulate(EXAMPLES / "init-and-sidecars.yaml")
    s, greedy = out["steps"]
    expect_admitted(s)
    # Partition of bubble 1-4 (see the example's header):
    expect_pod_allocation(s, "1-4", [mem(4, [0])])
    expect_container(
        s, "init-shared", cpus="1-4", isolation="pod", memory=[mem(4, [0])], hint=[0], ctype="init"
    )
    expect_container(
        s,
        "sidecar-excl",
        cpus="1",
        isolation="container",
        memory=[mem(1, [0])],
        hint=[0],
        ctype="sidecar",
    )
    expect_container(
        s,
        "init-excl",
        cpus="2-3",
        isolation="container",
        memory=[mem(2, [0])],
        hint=[0],
        ctype="init",
    )
    expect_container(
        s,
        "sidecar-shared",
        cpus="3-4",
        isolation="pod",
        memory=[mem(2, [0])],
        hint=[0],
        ctype="sidecar",
    )
    expect_container(s, "app-excl", cpus="2", isolation="container", memory=[mem(1, [0])], hint=[0])
    expect_container(s, "app-shared", cpus="3-4", isolation="pod", memory=[mem(2, [0])], hint=[0])
    # The ephemeral container has no row: the resource managers never see it.
    assert "debug" not in containers(s)
    assert s["defaultCpuSet"] == "0,5-15"
    expect_podresources(
        s,
        "pipeline",
        cpu_ids=[1, 2, 3, 4],
        memory=[podres_mem(4, [0])],
        # The kubelet's server lists sidecars and app containers only:
        # init-shared and init-excl have no entry.
        containers_={
            "sidecar-excl": ([1], [podres_mem(1, [0])]),
            "sidecar-shared": ([], []),
            "app-excl": ([2], [podres_mem(1, [0])]),
            "app-shared": ([], []),
        },
    )
    # A sidecar that takes the whole budget before a shared standard init
    # container (best-effort: the CPU manager's own error).
    expect_rejected(
        greedy,
        "EmptyPodSharedPoolError",
        REJECTED + "pod rejected, pod has shared init containers but no cpus available for them",
        "allocate:cpu",
    )
    cpu = out["checkpoints"]["cpuManager"]
    assert cpu.get("entries", {}) == {
        s["podUID"]: {
            "init-shared": "1-4",
            "sidecar-excl": "1",
            "init-excl": "2-3",
            "sidecar-shared": "3-4",
            "app-excl": "2",
            "app-shared": "3-4",
        }
    }
    assert cpu_pod_entries(cpu) == {s["podUID"]: {"cpuSet": "1-4"}}


def test_largest_init_container_check_unreachable(tmp_path: Path) -> None:
    # An init container larger than the budget minus earlier sidecars is
    # already invalid for the API server (aggregate requests > pod budget).
    doc = load("init-and-sidecars.yaml")
    pod = doc["steps"][1]["addPod"]
    pod["spec"]["resources"] = {
        "requests": {"cpu": "3", "memory": "3Gi"},
        "limits": {"cpu": "3", "memory": "3Gi"},
    }
    pod["spec"]["initContainers"] = [
        {
            "name": "proxy",
            "restartPolicy": "Always",
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
        },
        {"name": "setup", "resources": {"limits": {"cpu": "3", "memory": "1Gi"}}},
    ]
    path = tmp_path / "init.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = _invoke(path)
    assert result.exit_code == 2
    assert "aggregate container requests of 4" in result.stderr


# -- life cycle ----------------------------------------------------------------------------


def test_lifecycle() -> None:
    out = simulate(EXAMPLES / "lifecycle.yaml")
    restored, fresh, rm1, rm2, rm3, gone, again = out["steps"]
    uid = "5f1c2a9e-7b3d-4c1e-9a00-000000000001"
    # 0: v1.37.2 regenerates the pod-scope CPU hints from the container
    # entries; c2's entry (the pod pool) never matches its exclusive count
    # (0): empty CPU hints, single-numa-node rejects the pod.
    assert restored["podUID"] == uid
    expect_rejected(restored, "TopologyAffinityError", POD_SCOPE_TOPOLOGY_ERROR, "topology")
    assert restored["defaultCpuSet"] == "0-3,8-15"
    # 1: the rejected pod's entries are stale and go first: NUMA 0 (1-7
    # free) -> {0}: bubble 1-4, c1 1-2, pool 3-4.
    expect_admitted(fresh)
    expect_pod_allocation(fresh, "1-4", [mem(4, [0])])
    expect_container(fresh, "c1", cpus="1-2", isolation="container", memory=[mem(2, [0])], hint=[0])
    for name in ("c2", "c3"):
        expect_container(fresh, name, cpus="3-4", isolation="pod", memory=[mem(2, [0])], hint=[0])
    assert fresh["defaultCpuSet"] == "0,5-15"
    # 2-4: containers stopping free nothing while the pod is active.
    for step, left in ((rm1, ("c2", "c3")), (rm2, ("c3",)), (rm3, ())):
        assert step["op"] == "removeContainer"
        assert step["defaultCpuSet"] == "0,5-15"
        expect_pod_allocation(step, "1-4", [mem(4, [0])])
        assert sorted(containers(step)) == sorted(left)
        for name in left:
            expect_container(
                step, name, cpus="3-4", isolation="pod", memory=[mem(2, [0])], hint=[0]
            )
    # 5: the pod leaves the active set: the whole reservation comes back.
    assert gone["op"] == "removePod"
    assert gone["podAllocation"] is None and gone["containers"] == []
    assert gone["defaultCpuSet"] == "0-15"
    # 6: sequential reuse: NUMA 0 again, bubble 1-4.
    expect_admitted(again)
    expect_pod_allocation(again, "1-4", [mem(4, [0])])
    expect_container(again, "c1", cpus="1-2", isolation="container", memory=[mem(2, [0])], hint=[0])
    # Checkpoints after the last step: only the last pod.
    cpu = out["checkpoints"]["cpuManager"]
    assert cpu_pod_entries(cpu) == {again["podUID"]: {"cpuSet": "1-4"}}
    assert cpu.get("entries", {}) == {again["podUID"]: {"c1": "1-2", "c2": "3-4", "c3": "3-4"}}
    ms = out["checkpoints"]["memoryManager"]["machineState"]
    assert ms["0"]["memoryMap"]["memory"]["reserved"] == 4 * GI
    assert ms["1"]["memoryMap"]["memory"]["reserved"] == 0
    assert ms["1"]["numberOfAssignments"] == 0


def test_pod_budget_charged_once() -> None:
    # The containers' blocks of a pod-level pod are slices of its pod block
    # (the shared ones repeat the same pool): 2 + 2 + 2 = 6Gi of container
    # blocks for 4Gi reserved in the machine state.
    out = simulate(EXAMPLES / "lifecycle.yaml")
    fresh = out["steps"][1]
    assert sum(b["size"] for c in fresh["containers"] for b in c["memory"]) == 6 * GI
    assert sum(b["size"] for b in fresh["podAllocation"]["memory"]) == 4 * GI


# -- full-pcpus-only -------------------------------------------------------------------------


def test_full_pcpus_only() -> None:
    out = simulate(EXAMPLES / "full-pcpus-only.yaml")
    even, odd, classic_odd, too_big = out["steps"]
    # 4 = 2 whole cores: {1,9} and {2,10} (NUMA 0's free cores, lowest
    # first); c1's single CPU is 1, its sibling 9 stays in the pool.
    expect_admitted(even)
    expect_pod_allocation(even, "1-2,9-10", [mem(4, [0])])
    expect_container(even, "c1", cpus="1", isolation="container", memory=[mem(1, [0])], hint=[0])
    expect_container(even, "c2", cpus="2,9-10", isolation="pod", memory=[mem(3, [0])], hint=[0])
    assert even["defaultCpuSet"] == "0,3-8,11-15"
    expect_rejected(
        odd,
        "SMTAlignmentError",
        REJECTED + "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2",
        "allocate:cpu",
    )
    expect_rejected(
        classic_odd,
        "SMTAlignmentError",
        REJECTED + "SMT Alignment Error: requested 1 cpus not multiple cpus per core = 2",
        "allocate:cpu",
    )
    # Free whole cores after step 0: {3,11}, {4,12}, {5,13}, {6,14}, {7,15}.
    expect_rejected(
        too_big,
        "SMTAlignmentError",
        REJECTED
        + "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 10, "
        "requested CPUs = 12, CPUs per core = 2",
        "allocate:cpu",
    )
    assert too_big["defaultCpuSet"] == "0,3-8,11-15"


# -- every example runs, and the table output shows the pod budget -------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_example_runs_in_every_output(name: str) -> None:
    for fmt in ("table", "yaml"):
        result = CliRunner().invoke(
            cli, ["simulate", str(EXAMPLES / name), "-o", fmt], catch_exceptions=False
        )
        assert result.exit_code == 0, result.output


def test_table_pinned_memory_counts_pod_budget_once() -> None:
    # The NUMA summary's "pinned memory" of a pod-level pod is its pod
    # block (4Gi), not the sum of its containers' blocks (6Gi).
    result = CliRunner().invoke(
        cli,
        ["simulate", str(EXAMPLES / "pod-scope-2-mixed.yaml")],
        catch_exceptions=False,
        terminal_width=200,
    )
    row0 = [ln for ln in result.stdout.splitlines() if ln.strip().startswith("0   0-7")]
    assert row0 and row0[0].split()[-1] == "4Gi", result.stdout


def test_exclusive_memory_without_integer_cpu(tmp_path: Path) -> None:
    # Eligibility (code): requests = limits for CPU and memory makes a
    # container Guaranteed-equivalent -> exclusive MEMORY; exclusive CPUs
    # also need a whole CPU count. A 1500m / 1Gi container thus gets its own
    # 1Gi block but runs in the pod shared pool (isolation "pod", quota on):
    # bubble 1-4, no CPU slice, so both containers on 1-4; memory pool
    # 4 - 1 = 3Gi for the shared one.
    doc = load("pod-scope-2-mixed.yaml")
    spec = doc["steps"][0]["addPod"]["spec"]
    spec["containers"] = [
        {"name": "half", "resources": {"limits": {"cpu": "1500m", "memory": "1Gi"}}},
        {"name": "shared"},
    ]
    (s,) = simulate_doc(doc, tmp_path)["steps"]
    expect_admitted(s)
    expect_pod_allocation(s, "1-4", [mem(4, [0])])
    expect_container(s, "half", cpus="1-4", isolation="pod", memory=[mem(1, [0])], hint=[0])
    expect_container(s, "shared", cpus="1-4", isolation="pod", memory=[mem(3, [0])], hint=[0])
    expect_podresources(
        s,
        "pod-scope-mixed",
        cpu_ids=[1, 2, 3, 4],
        memory=[podres_mem(4, [0])],
        containers_={"half": ([], [podres_mem(1, [0])]), "shared": ([], [])},
    )

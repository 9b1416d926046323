"""Topology Manager policies and scopes, end to end through ``podnuma simulate``.

Every scenario of ``examples/topology/`` runs through the real command line
(click's runner, ``-o json``); the assertions are the outcomes derived by
hand from the kubelet's rules (v1.37 topologymanager / cpumanager /
memorymanager / devicemanager), each with its reasoning in a comment. Then a
matrix: one shared pod list on the same node under every policy x scope.

The node of every example (synthetic 2 sockets x 2 NUMA x 4 cores x 2
threads, Linux numbering):

    NUMA 0: 0-3,16-19   NUMA 1: 4-7,20-23   NUMA 2: 8-11,24-27   NUMA 3: 12-15,28-31

reserved CPUs 0,16 (so NUMA 0 has 6 CPUs for pods); per NUMA node 16Gi of
memory including a 1Gi pool of 2Mi pages and a 2Gi pool of 1Gi pages;
reservedMemory 512Mi on NUMA 0 and 2, so the memory manager's allocatable
memory is 12.5Gi on NUMA 0 and 2, 13Gi on NUMA 1 and 3 (51Gi in all, equal
to node allocatable memory). gpu0..gpu3 on NUMA 0..3; nic-vf0/1 on NUMA 1.
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
from podnuma.machine.cpuset import CPUSet

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "topology"
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.yaml"))

NUMA = {
    0: CPUSet.parse("0-3,16-19"),
    1: CPUSet.parse("4-7,20-23"),
    2: CPUSet.parse("8-11,24-27"),
    3: CPUSet.parse("12-15,28-31"),
}
GI = 1 << 30
MI = 1 << 20
TOPOLOGY_ERROR = "Pod was rejected: Resources cannot be allocated with Topology locality"


def _unexpected(err: str) -> str:
    return f"Pod was rejected: Allocate failed due to {err}, which is unexpected"


NO_DEFAULT_AFFINITY = _unexpected(
    "[memorymanager] failed to get the default NUMA affinity, "
    "no NUMA nodes with enough memory is available"
)
VIOLATES_ALLOCATIONS = _unexpected("[memorymanager] preferred hint violates NUMA node allocation")


# -- running --------------------------------------------------------------------


def simulate(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def simulate_doc(doc: dict[str, Any], tmp_path: Path, name: str = "scenario.yaml") -> dict[str, Any]:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return simulate(path)


def load_example(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    return doc


def steps_by_pod(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The last step of each pod (``namespace/name``) that was an addPod."""
    return {s["pod"]: s for s in doc["steps"] if s["op"] == "addPod"}


def container(step: dict[str, Any], name: str) -> dict[str, Any]:
    for c in step["containers"]:
        if c["name"] == name:
            out: dict[str, Any] = c
            return out
    raise AssertionError(f"no container {name!r} in {step['pod']}")


def cpus(c: dict[str, Any]) -> CPUSet:
    return CPUSet.parse(c["cpus"])


def hint(c: dict[str, Any]) -> tuple[list[int] | None, bool]:
    h = c["topologyHint"]
    return h["numaNodes"], h["preferred"]


def memory(c: dict[str, Any]) -> list[tuple[str, list[int], int]]:
    return [(b["type"], b["numaNodes"], b["size"]) for b in c["memory"]]


def admitted(step: dict[str, Any]) -> None:
    assert step["admitted"] is True, (step["pod"], step["reason"], step["message"])
    assert step["reason"] is None and step["message"] is None


def rejected(step: dict[str, Any], reason: str, message: str) -> None:
    assert step["admitted"] is False, step["pod"]
    assert (step["reason"], step["message"]) == (reason, message)
    assert step["containers"] == []


# -- every example runs, in every output ------------------------------------------


def test_the_examples_are_all_there() -> None:
    assert EXAMPLE_FILES == [
        "best-effort.yaml",
        "none.yaml",
        "pod-scope.yaml",
        "prefer-closest-numa-nodes.yaml",
        "restricted.yaml",
        "single-numa-node.yaml",
    ]


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_runs_as_a_table(name: str) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(EXAMPLES / name)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # The plain table fits 120 columns and its last column (the hint) is not
    # cut off on this four-NUMA node.
    assert max(len(line) for line in lines) <= 120
    header = next(line for line in lines if line.split()[:3] == ["#", "pod", "admission"])
    assert header.split()[-1] == "hint"
    assert "node snc-node   CPUs 0-31 (32)   NUMA nodes 0,1,2,3   reserved 0,16" in lines[0]


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_node(name: str) -> None:
    doc = simulate(EXAMPLES / name)
    assert doc["node"] == {
        "name": "snc-node",
        "cpus": "0-31",
        "numaNodes": [0, 1, 2, 3],
        "reservedCpus": "0,16",
    }


# -- the shared story of the four policy examples -----------------------------------
#
# Steps: aligned (4 CPUs, 2Gi, 1 GPU) / hugepages (1 CPU, 1Gi, 2Gi of 1Gi
# pages, 256Mi of 2Mi pages) / gpu-pair (Burstable, 2 GPUs) / filler-1..3
# (8 CPUs, 1Gi each) / nic (1 CPU, 1Gi, 1 NIC VF) / memory-hog (500m, 40Gi) /
# filler-1 and -2 removed / wide (12 CPUs, 4Gi) / [wide-memory (12 CPUs,
# 20Gi): restricted and single-numa-node only] / aligned removed /
# aligned-again.


def _check_aligned_start(pods: dict[str, dict[str, Any]], *, with_hints: bool) -> None:
    # aligned: 4 CPUs fit NUMA 0 (6 free, the narrowest and lowest), 2Gi and
    # gpu0 too: every provider's {0} is preferred -> {0} preferred.
    # Under policy none there is no hint, but the CPU and memory managers'
    # own choices are NUMA 0 as well: the packed picker prefers the NUMA node
    # with the fewest free CPUs (NUMA 0), the memory manager's default hint
    # is the narrowest lowest node. The device manager, without a hint,
    # draws from all free GPUs (upstream: Go set order, i.e. any of them;
    # podnuma: registration order, gpu0).
    step = pods["demo/aligned"]
    admitted(step)
    app = container(step, "app")
    assert app["cpus"] == "1-2,17-18"  # two whole cores of NUMA 0, after the reserved one
    assert app["isolation"] == "container"
    assert memory(app) == [("memory", [0], 2 * GI)]
    assert app["devices"] == {"example.com/gpu": ["gpu0"]}  # with a hint {0}: the only GPU there
    assert hint(app) == (([0], True) if with_hints else (None, False))

    # hugepages: the last 2 free CPUs of NUMA 0 (3, 19) still fit one CPU, and
    # NUMA 0's 1Gi page pool is whole: {0}. Blocks: every requested resource
    # on that node (huge page sizes first: resources by name).
    step = pods["demo/hugepages"]
    admitted(step)
    dpdk = container(step, "dpdk")
    assert cpus(dpdk).size() == 1 and cpus(dpdk).is_subset_of(CPUSet.parse("3,19"))
    assert memory(dpdk) == [
        ("hugepages-1Gi", [0], 2 * GI),
        ("hugepages-2Mi", [0], 256 * MI),
        ("memory", [0], 1 * GI),
    ]
    assert dpdk["mems"] == [0]
    assert hint(dpdk) == (([0], True) if with_hints else (None, False))


def _check_fillers(pods: dict[str, dict[str, Any]], *, memory_on: list[int]) -> None:
    # 8 CPUs = a whole NUMA node; NUMA 0 has only 1 free CPU left, so the
    # three fillers take NUMA 1, 2, 3 in turn (narrowest lowest preferred
    # hint; under none the packed picker takes whole free NUMA nodes, sockets
    # with fewer free CPUs first: NUMA 1, then 2, then 3).
    for i, nid in zip((1, 2, 3), memory_on, strict=True):
        step = pods[f"demo/filler-{i}"]
        admitted(step)
        app = container(step, "app")
        assert cpus(app) == NUMA[i]
        assert memory(app) == [("memory", [nid], 1 * GI)]


def test_none_policy() -> None:
    doc = simulate(EXAMPLES / "none.yaml")
    pods = steps_by_pod(doc)
    _check_aligned_start(pods, with_hints=False)

    # gpu-pair: no hint, no alignment: two of the free GPUs (podnuma takes
    # them in registration order; upstream's choice is Go set order); a
    # Burstable container runs on the node's shared pool, memory not pinned.
    step = pods["demo/gpu-pair"]
    admitted(step)
    trainer = container(step, "trainer")
    assert trainer["devices"] == {"example.com/gpu": ["gpu1", "gpu2"]}
    assert trainer["isolation"] == "host" and trainer["memory"] == []
    assert trainer["mems"] == [0, 1, 2, 3]
    assert trainer["cpus"] == step["defaultCpuSet"]

    # Fillers: CPUs on NUMA 1, 2, 3 but the memory manager, with no hint,
    # always takes its default: the lowest NUMA node with room, NUMA 0.
    _check_fillers(pods, memory_on=[0, 0, 0])

    # nic: the last free CPU (19) and a NIC VF from NUMA 1, memory on NUMA 0:
    # nothing checks locality under none.
    step = pods["demo/nic"]
    admitted(step)
    router = container(step, "router")
    assert router["cpus"] == "19"
    assert router["devices"]["example.com/nic"] in (["nic-vf0"], ["nic-vf1"])
    assert memory(router) == [("memory", [0], GI)]
    assert step["defaultCpuSet"] == "0,16"  # only the reserved core is left shared

    # memory-hog: NUMA 0 holds single-NUMA blocks (so no group may contain
    # it), {1,2,3} has 13 + 12.5 + 13 = 38.5Gi < 40Gi, single nodes are far
    # too small: calculateHints finds nothing. With no stored hint the
    # memory manager needs its default hint and has none ->
    # UnexpectedAdmissionError from Allocate. It is not OutOfcpu (all 30
    # allocatable CPUs are requested already): the allocation handler runs
    # before the node-allocatable fit.
    rejected(pods["demo/memory-hog"], "UnexpectedAdmissionError", NO_DEFAULT_AFFINITY)

    # wide: 12 CPUs from the 16 freed on NUMA 1 and 2 (whole NUMA 1 first,
    # then two cores of NUMA 2); 4Gi on NUMA 0, far from all of them.
    step = pods["demo/wide"]
    admitted(step)
    solver = container(step, "solver")
    assert solver["cpus"] == "4-9,20-25"
    assert memory(solver) == [("memory", [0], 4 * GI)]
    assert hint(solver) == (None, False)

    # re-use: the aligned pod's CPUs and memory node come back; the GPU is
    # one of the two free ones (gpu0, gpu3), without a hint to choose.
    step = pods["demo/aligned-again"]
    admitted(step)
    app = container(step, "app")
    assert app["cpus"] == "1-2,17-18"
    assert app["devices"]["example.com/gpu"] in (["gpu0"], ["gpu3"])
    assert memory(app) == [("memory", [0], 2 * GI)]


def test_best_effort_policy() -> None:
    doc = simulate(EXAMPLES / "best-effort.yaml")
    pods = steps_by_pod(doc)
    _check_aligned_start(pods, with_hints=True)

    # gpu-pair: Burstable, so no CPU or memory hints (nil = don't care), but
    # device hints apply to every QoS class. 2 GPUs: every registered GPU
    # counts for preference, so 2-node masks are the narrowest (preferred);
    # with gpu0 taken, {1,2} is the lowest that has 2 free GPUs.
    step = pods["demo/gpu-pair"]
    admitted(step)
    trainer = container(step, "trainer")
    assert hint(trainer) == ([1, 2], True)
    assert trainer["devices"] == {"example.com/gpu": ["gpu1", "gpu2"]}
    assert trainer["isolation"] == "host" and trainer["memory"] == []

    _check_fillers(pods, memory_on=[1, 2, 3])

    # nic: CPU hints all contain NUMA 0 (the only free CPU), {0} preferred;
    # NIC hints: v1.37.2 combines only the NUMA nodes hosting a NIC, so the
    # only hint is {1}, preferred; memory {0}..{3} preferred. No permutation
    # agrees on one mask, so nothing is preferred; every non-empty merge
    # holds NUMA 1: CPU {0,1} & NIC {1} & memory {1} = {1}. best-effort
    # admits it: CPU 19 from NUMA 0, memory and the NIC on NUMA 1.
    step = pods["demo/nic"]
    admitted(step)
    router = container(step, "router")
    assert hint(router) == ([1], False)
    assert router["cpus"] == "19"
    assert memory(router) == [("memory", [1], GI)]
    # either VF: upstream draws from a Go set; podnuma takes the first
    assert router["devices"]["example.com/nic"] in (["nic-vf0"], ["nic-vf1"])

    # memory-hog: every node holds single-NUMA blocks, 40Gi exceeds any one
    # node: empty memory hint map = don't care; no other provider has hints
    # (500m: no exclusive CPUs), so the merge is {0,1,2,3} preferred.
    # Allocate: the mask satisfies 40Gi (44Gi free over all nodes) but mixes
    # single- and cross-NUMA use -> isAffinityViolatingNUMAAllocations.
    rejected(pods["demo/memory-hog"], "UnexpectedAdmissionError", VIOLATES_ALLOCATIONS)

    # wide: CPU hints: only {1,2} has 12 free CPUs among pairs (preferred:
    # 12 > 8 = a node's capacity); memory hints: single nodes preferred
    # (NUMA 1 holds the router's single-node block, so no group with it). No
    # preferred merge; the lowest merge of the target width wins: {0}
    # non-preferred. The CPUs still come from NUMA 1 + 2 (NUMA 0 has too
    # few), the memory from NUMA 0.
    step = pods["demo/wide"]
    admitted(step)
    solver = container(step, "solver")
    assert hint(solver) == ([0], False)
    assert solver["cpus"] == "4-9,20-25"
    assert cpus(solver).is_subset_of(NUMA[1] | NUMA[2])
    assert memory(solver) == [("memory", [0], 4 * GI)]
    assert solver["mems"] == [0]

    # aligned-again: NUMA 0 has the 4 freed CPUs and gpu0; NUMA 1 and 2 are
    # a memory group now, so their single-node memory hints are gone;
    # {0} preferred for all.
    step = pods["demo/aligned-again"]
    admitted(step)
    app = container(step, "app")
    assert hint(app) == ([0], True)
    assert app["cpus"] == "1-2,17-18"
    assert app["devices"] == {"example.com/gpu": ["gpu0"]}


def test_restricted_policy() -> None:
    doc = simulate(EXAMPLES / "restricted.yaml")
    pods = steps_by_pod(doc)
    _check_aligned_start(pods, with_hints=True)

    # gpu-pair: {1,2} is preferred (the device manager's only provider with
    # hints): restricted accepts multi-node hints when they are preferred.
    step = pods["demo/gpu-pair"]
    admitted(step)
    assert hint(container(step, "trainer")) == ([1, 2], True)
    assert container(step, "trainer")["devices"] == {"example.com/gpu": ["gpu1", "gpu2"]}

    _check_fillers(pods, memory_on=[1, 2, 3])

    # nic: same merge as best-effort, {0} non-preferred -> rejected by the
    # topology manager; nothing allocated, CPU 19 stays shared.
    step = pods["demo/nic"]
    rejected(step, "TopologyAffinityError", TOPOLOGY_ERROR)
    assert step["defaultCpuSet"] == "0,16,19"

    # memory-hog: memory "don't care" -> {0,1,2,3} preferred passes
    # restricted; the memory manager then rejects it like under best-effort.
    rejected(pods["demo/memory-hog"], "UnexpectedAdmissionError", VIOLATES_ALLOCATIONS)

    # wide: same merge as best-effort, {1,2} non-preferred -> rejected.
    rejected(pods["demo/wide"], "TopologyAffinityError", TOPOLOGY_ERROR)

    # wide-memory: 20Gi needs two nodes as well; nodes 0 and 3 hold
    # single-NUMA blocks, so the memory manager offers only {1,2}, preferred
    # (its narrowest width is 2), the CPU manager prefers {1,2} too (the only
    # pair with 12 free CPUs): the same mask from every provider -> {1,2}
    # preferred, admitted.
    step = pods["demo/wide-memory"]
    admitted(step)
    solver = container(step, "solver")
    assert hint(solver) == ([1, 2], True)
    assert cpus(solver).size() == 12 and cpus(solver).is_subset_of(NUMA[1] | NUMA[2])
    assert memory(solver) == [("memory", [1, 2], 20 * GI)]

    step = pods["demo/aligned-again"]
    admitted(step)
    assert hint(container(step, "app")) == ([0], True)
    assert container(step, "app")["cpus"] == "1-2,17-18"


def test_single_numa_node_policy() -> None:
    doc = simulate(EXAMPLES / "single-numa-node.yaml")
    pods = steps_by_pod(doc)
    _check_aligned_start(pods, with_hints=True)

    # gpu-pair: two GPUs need two NUMA nodes; single-numa-node drops every
    # hint with more than one node, the device resource has none left ->
    # no permutation -> rejected, although the pod is Burstable.
    rejected(pods["demo/gpu-pair"], "TopologyAffinityError", TOPOLOGY_ERROR)

    _check_fillers(pods, memory_on=[1, 2, 3])

    # nic: single-node hints {0} (CPU) and {1} (NIC) never intersect.
    rejected(pods["demo/nic"], "TopologyAffinityError", TOPOLOGY_ERROR)

    # memory-hog: the empty memory hint map is "don't care" even here; the
    # merge covers every node and is reported as nil, preferred -> admitted
    # by the topology manager. The memory manager's Allocate sees a nil
    # affinity, computes its default hint and finds none ->
    # UnexpectedAdmissionError, not TopologyAffinityError.
    rejected(pods["demo/memory-hog"], "UnexpectedAdmissionError", NO_DEFAULT_AFFINITY)

    # wide: 12 CPUs cannot come from one node: no single-node CPU hint.
    rejected(pods["demo/wide"], "TopologyAffinityError", TOPOLOGY_ERROR)
    # wide-memory: {1,2} is preferred by every provider, but not single-node.
    rejected(pods["demo/wide-memory"], "TopologyAffinityError", TOPOLOGY_ERROR)

    step = pods["demo/aligned-again"]
    admitted(step)
    app = container(step, "app")
    assert hint(app) == ([0], True)
    assert app["cpus"] == "1-2,17-18"
    assert app["devices"] == {"example.com/gpu": ["gpu0"]}
    assert memory(app) == [("memory", [0], 2 * GI)]


def test_removal_returns_resources() -> None:
    # In every policy example, the step removing demo/aligned puts its CPUs
    # back into the shared pool, and the next admission takes them again.
    for name in ("none.yaml", "best-effort.yaml", "restricted.yaml", "single-numa-node.yaml"):
        steps = simulate(EXAMPLES / name)["steps"]
        removal = next(s for s in steps if s["op"] == "removePod" and s["pod"] == "demo/aligned")
        assert removal["containers"] == []
        before = CPUSet.parse(steps[removal["index"] - 1]["defaultCpuSet"])
        after = CPUSet.parse(removal["defaultCpuSet"])
        assert after - before == CPUSet.parse("1-2,17-18"), name
        readded = steps[removal["index"] + 1]
        assert CPUSet.parse(readded["defaultCpuSet"]) == before, name


# -- pod scope ------------------------------------------------------------------------


def test_pod_scope() -> None:
    doc = simulate(EXAMPLES / "pod-scope.yaml")
    pods = steps_by_pod(doc)

    # split: the pod needs 8 CPUs on one node (2 x 4), NUMA 0 has 6 free ->
    # {1} for the pod; every container stores the same hint.
    step = pods["demo/split"]
    admitted(step)
    left, right = container(step, "left"), container(step, "right")
    assert hint(left) == hint(right) == ([1], True)
    assert (cpus(left) | cpus(right)) == NUMA[1]
    assert memory(left) == memory(right) == [("memory", [1], 2 * GI)]

    # pair: 12 CPUs for the pod, no single node can hold them.
    rejected(pods["demo/pair"], "TopologyAffinityError", TOPOLOGY_ERROR)

    # pipeline: pod CPUs = max(init 4, app 4 + sidecar 1) = 5, memory
    # max(1Gi, 2Gi + 256Mi), 1 GPU: NUMA 0 (6 free CPUs, gpu0) -> {0}.
    step = pods["demo/pipeline"]
    admitted(step)
    migrate, proxy, server = (container(step, n) for n in ("migrate", "proxy", "server"))
    assert [c["type"] for c in (migrate, proxy, server)] == ["init", "sidecar", "app"]
    assert hint(migrate) == hint(proxy) == hint(server) == ([0], True)
    assert migrate["cpus"] == "1-2,17-18"
    # the sidecar reuses one of the init container's (reusable) CPUs
    assert cpus(proxy).size() == 1 and cpus(proxy).is_subset_of(cpus(migrate))
    # the app reuses what the sidecar left of the init CPUs plus fresh ones,
    # whole cores first (2,18 and 3,19), never the sidecar's CPU
    assert server["cpus"] == "2-3,18-19"
    assert (cpus(server) & cpus(proxy)).is_empty()
    assert server["devices"] == {"example.com/gpu": ["gpu0"]}
    # memory: the app reuses the init container's 1Gi block, which shrinks to 0
    assert memory(migrate) == [("memory", [0], 0)]
    assert memory(proxy) == [("memory", [0], 256 * MI)]
    assert memory(server) == [("memory", [0], 2 * GI)]

    # split-again: NUMA 0 has one free CPU, NUMA 1 is free again -> {1},
    # the same CPUs as before.
    step = pods["demo/split-again"]
    admitted(step)
    assert container(step, "left")["cpus"] == "4-5,20-21"
    assert container(step, "right")["cpus"] == "6-7,22-23"


def test_pod_scope_example_under_container_scope(tmp_path: Path) -> None:
    doc = load_example("pod-scope.yaml")
    doc["kubeletConfig"]["topologyManagerScope"] = "container"
    pods = steps_by_pod(simulate_doc(doc, tmp_path))

    # split: left {0} (4 of NUMA 0's 6), right: NUMA 0 has 2 left -> {1}.
    step = pods["demo/split"]
    admitted(step)
    assert hint(container(step, "left")) == ([0], True)
    assert hint(container(step, "right")) == ([1], True)
    assert container(step, "left")["cpus"] == "1-2,17-18"
    assert container(step, "right")["cpus"] == "4-5,20-21"

    # pair: each 6-CPU container fits one node on its own: {2} then {3}.
    step = pods["demo/pair"]
    admitted(step)
    assert hint(container(step, "left")) == ([2], True)
    assert hint(container(step, "right")) == ([3], True)

    # pipeline: migrate (4) -> {1} (4 free there). The sidecar's CPU hints
    # must contain NUMA 1 (a mask has to hold every CPU it may reuse) -> {1},
    # taking one of migrate's CPUs; sidecar CPUs are not reusable, so the
    # app sees 3 reusable CPUs on NUMA 1 and needs {0,1} at least: no
    # single-node CPU hint -> TopologyAffinityError.
    rejected(pods["demo/pipeline"], "TopologyAffinityError", TOPOLOGY_ERROR)


# -- prefer-closest-numa-nodes ---------------------------------------------------------


def test_prefer_closest_numa_nodes(tmp_path: Path) -> None:
    pods = steps_by_pod(simulate(EXAMPLES / "prefer-closest-numa-nodes.yaml"))
    # batch: 8 CPUs, NUMA 0 has 6 -> {1} (single nodes tie on distance 10;
    # ties go to the lower mask).
    step = pods["demo/batch"]
    admitted(step)
    assert hint(container(step, "app")) == ([1], True)
    assert cpus(container(step, "app")) == NUMA[1]

    # solver: 12 CPUs and 20Gi: both providers need 2 nodes; NUMA 1 holds a
    # single-NUMA block, so {0,2}, {0,3}, {2,3} are preferred by both.
    # Average distances (all ordered pairs, self included): {0,2} and {0,3}
    # (10+21+21+10)/4 = 15.5, {2,3} (10+12+12+10)/4 = 11 -> {2,3}.
    step = pods["demo/solver"]
    admitted(step)
    app = container(step, "app")
    assert hint(app) == ([2, 3], True)
    assert cpus(app).size() == 12 and cpus(app).is_subset_of(NUMA[2] | NUMA[3])
    assert memory(app) == [("memory", [2, 3], 20 * GI)]

    # The same scenario without the option: the numerically lowest of the
    # equally narrow preferred masks, {0,2}, across the two sockets.
    doc = load_example("prefer-closest-numa-nodes.yaml")
    del doc["kubeletConfig"]["topologyManagerPolicyOptions"]
    app = container(steps_by_pod(simulate_doc(doc, tmp_path))["demo/solver"], "app")
    assert hint(app) == ([0, 2], True)
    # packed inside {0,2}: NUMA 2 whole (a free NUMA node first), then two
    # whole cores of NUMA 0
    assert app["cpus"] == "1-2,8-11,17-18,24-27"
    assert memory(app) == [("memory", [0, 2], 20 * GI)]


def test_prefer_closest_is_ignored_by_single_numa_node(tmp_path: Path) -> None:
    # The option is accepted with single-numa-node but plays no part: the
    # solver needs two nodes and is rejected, the batch pod is placed as
    # without the option.
    doc = load_example("prefer-closest-numa-nodes.yaml")
    doc["kubeletConfig"]["topologyManagerPolicy"] = "single-numa-node"
    pods = steps_by_pod(simulate_doc(doc, tmp_path))
    assert hint(container(pods["demo/batch"], "app")) == ([1], True)
    rejected(pods["demo/solver"], "TopologyAffinityError", TOPOLOGY_ERROR)


# -- the matrix: policy x scope over one pod list --------------------------------------

POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
SCOPES = ("container", "pod")


def _pod(name: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
    return {"addPod": {"metadata": {"name": name, "namespace": "matrix"}, "spec": {"containers": containers}}}


def _ctr(name: str, **limits: str) -> dict[str, Any]:
    return {"name": name, "resources": {"limits": dict(limits)}}


GPU = "example.com/gpu"

MATRIX_STEPS: list[dict[str, Any]] = [
    # duo: two 4-CPU containers, the second with a GPU (pod: 8 CPUs, 2Gi, 1 GPU)
    _pod("duo", [_ctr("a", cpu="4", memory="1Gi"), _ctr("b", cpu="4", memory="1Gi", **{GPU: "1"})]),
    # hp: 2 CPUs, 1Gi of memory and 2Gi of 1Gi huge pages
    _pod("hp", [_ctr("app", cpu="2", memory="1Gi", **{"hugepages-1Gi": "2Gi"})]),
    # big: two 6-CPU containers (pod: 12 CPUs, 2Gi)
    _pod("big", [_ctr("a", cpu="6", memory="1Gi"), _ctr("b", cpu="6", memory="1Gi")]),
    # burst: Burstable with two GPUs
    {"addPod": {"metadata": {"name": "burst", "namespace": "matrix"}, "spec": {"containers": [
        {"name": "app", "resources": {"requests": {"memory": "512Mi"}, "limits": {"memory": "1Gi", GPU: "2"}}}
    ]}}},
    # wide: 12 CPUs and 4Gi, once the node is mostly full
    _pod("wide", [_ctr("app", cpu="12", memory="4Gi")]),
]

A = ("admitted",)
TAE = ("TopologyAffinityError", TOPOLOGY_ERROR)


def _no_cpus(requested: int, available: int) -> tuple[str, str]:
    return (
        "UnexpectedAdmissionError",
        _unexpected(
            "not enough cpus available to satisfy request: "
            f"requested={requested}, available={available}"
        ),
    )


# Per cell, per pod: admitted or (reason, message). Reasoning:
#
# container scope (best-effort, restricted, single-numa-node): duo.a -> {0}
#   (4 of NUMA 0's 6), duo.b -> {1} (NUMA 0 has 2 left; gpu1); hp -> {0}
#   (CPUs 3,19; NUMA 0's 1Gi pool); big.a -> {2}, big.b -> {3} (6 CPUs fit
#   one node each); burst: 2 GPUs with gpu1 taken -> {0,2} preferred:
#   single-numa-node rejects it; wide: NUMA 1, 2, 3 keep 4 + 2 + 2 = 8 free
#   CPUs < 12: the CPU manager has no hint at all (an empty list ->
#   {nil, non-preferred}). restricted and single-numa-node reject that;
#   best-effort admits the non-preferred merge and the CPU manager then
#   fails to allocate: UnexpectedAdmissionError (the node-allocatable check
#   that would say OutOfcpu comes after).
# pod scope: duo needs 8 CPUs on a node -> {1} (NUMA 0 has 6) for both
#   containers, gpu1; hp -> {0} (CPUs from NUMA 0's 6); big needs 12 CPUs:
#   CPU manager prefers pairs ({0,2}, {0,3}, {2,3}), the memory manager
#   prefers single nodes and offers only the group {2,3} (NUMA 0 and 1 hold
#   single-NUMA blocks): {2,3} non-preferred. best-effort admits it (both
#   containers in NUMA 2+3), restricted and single-numa-node reject it.
#   burst: {0,2} as in container scope. wide: best-effort: 4 (NUMA 0) + 4
#   (left in NUMA 2+3) = 8 free CPUs, no CPU hint; memory offers {0}, {1}
#   and the group {2,3}: the merge is {0}, non-preferred. allocateCPUs
#   takes the 4 aligned CPUs of NUMA 0 first, then looks for the other 8
#   among the 4 left elsewhere: the error names that second take
#   (requested=8, available=4). (Container scope: NUMA 0 has no free CPU,
#   so the first take is empty and the error says requested=12,
#   available=8.) restricted: {2,3}
#   non-preferred again (memory offers single nodes and {2,3}) -> rejected;
#   single-numa-node: no single node has 12 CPUs.
# none (scope ignored: policy none always uses its own scope): everything is
#   admitted up to wide, which finds only NUMA 3's 8 CPUs free and fails in
#   the CPU manager's Allocate.
MATRIX: dict[tuple[str, str], list[tuple[str, ...]]] = {
    ("none", "container"): [A, A, A, A, _no_cpus(12, 8)],
    ("none", "pod"): [A, A, A, A, _no_cpus(12, 8)],
    ("best-effort", "container"): [A, A, A, A, _no_cpus(12, 8)],
    ("best-effort", "pod"): [A, A, A, A, _no_cpus(8, 4)],
    ("restricted", "container"): [A, A, A, A, TAE],
    ("restricted", "pod"): [A, A, TAE, A, TAE],
    ("single-numa-node", "container"): [A, A, A, TAE, TAE],
    ("single-numa-node", "pod"): [A, A, TAE, TAE, TAE],
}

# The stored hints of duo's containers (a, b) per cell.
DUO_HINTS = {
    "none": ((None, False), (None, False)),
    "container": (([0], True), ([1], True)),
    "pod": (([1], True), ([1], True)),
}


@pytest.fixture(scope="module")
def matrix_base() -> dict[str, Any]:
    doc = load_example("best-effort.yaml")
    doc["steps"] = MATRIX_STEPS
    return doc


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("scope", SCOPES)
def test_policy_scope_matrix(
    policy: str, scope: str, matrix_base: dict[str, Any], tmp_path: Path
) -> None:
    doc = copy.deepcopy(matrix_base)
    doc["kubeletConfig"]["topologyManagerPolicy"] = policy
    doc["kubeletConfig"]["topologyManagerScope"] = scope
    out = simulate_doc(doc, tmp_path)
    steps = out["steps"]
    got = [A if s["admitted"] else (s["reason"], s["message"]) for s in steps]
    assert got == MATRIX[(policy, scope)]

    duo = steps[0]
    a, b = container(duo, "a"), container(duo, "b")
    want = DUO_HINTS["none" if policy == "none" else scope]
    assert (hint(a), hint(b)) == want
    if policy != "none":
        # CPUs and memory follow the stored hints
        for c, (nodes, _) in ((a, want[0]), (b, want[1])):
            assert nodes is not None and len(nodes) == 1
            assert cpus(c).is_subset_of(NUMA[nodes[0]])
            assert memory(c) == [("memory", nodes, GI)]
        assert b["devices"] == {GPU: ["gpu1"]}
    else:
        # no hint: the device manager takes any free GPU (podnuma: the first
        # registered), the memory manager its default node 0 for both
        assert len(b["devices"][GPU]) == 1
        assert memory(a) == memory(b) == [("memory", [0], GI)]

    # hp: memory and the 1Gi page pool of NUMA 0
    hp = container(steps[1], "app")
    assert memory(hp) == [("hugepages-1Gi", [0], 2 * GI), ("memory", [0], GI)]
    if policy != "none":
        assert hint(hp) == ([0], True) and cpus(hp).is_subset_of(NUMA[0])

    big = steps[2]
    if policy == "best-effort" and scope == "pod":
        for name in ("a", "b"):
            c = container(big, name)
            assert hint(c) == ([2, 3], False)
            assert cpus(c).is_subset_of(NUMA[2] | NUMA[3])
            assert memory(c) == [("memory", [2, 3], GI)]
    elif big["admitted"] and policy != "none":
        assert hint(container(big, "a")) == ([2], True)
        assert hint(container(big, "b")) == ([3], True)

    burst = steps[3]
    if burst["admitted"]:
        got_gpus = container(burst, "app")["devices"][GPU]
        if policy == "none":
            # any two free GPUs, not duo's
            assert len(set(got_gpus)) == 2 and not set(got_gpus) & set(b["devices"][GPU])
        else:
            # {0,2} holds exactly the two free GPUs gpu0 and gpu2
            assert sorted(got_gpus) == ["gpu0", "gpu2"]
            assert hint(container(burst, "app")) == ([0, 2], True)


def test_matrix_none_ignores_scope(matrix_base: dict[str, Any], tmp_path: Path) -> None:
    # Policy none always runs the none scope: the whole output is the same
    # under either configured scope.
    outs = []
    for scope in SCOPES:
        doc = copy.deepcopy(matrix_base)
        doc["kubeletConfig"]["topologyManagerPolicy"] = "none"
        doc["kubeletConfig"]["topologyManagerScope"] = scope
        outs.append(simulate_doc(doc, tmp_path, f"{scope}.yaml"))
    assert outs[0]["steps"] == outs[1]["steps"]
    assert outs[0]["checkpoints"] == outs[1]["checkpoints"]

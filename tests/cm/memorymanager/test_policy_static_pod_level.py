"""Tests of the Static memory policy's pod-level resource managers (KEP-5526).

Ports upstream's v1.37 pod-level memory manager tests as data:
``policy_static_restore_test.go`` ``TestMemoryManagerRestoreState`` (every
row) and ``TestMemoryManagerRestorePartialPodCheckpoint`` (the v1.37 outcome,
kubernetes#141993), and the e2e ``memory_manager_test.go`` empty-pod-shared-
pool rejection (message substring under best-effort and restricted). The
allocation tables are derived from the KEP-5526 examples and the rules of
``AllocatePod`` (pod budget, exclusive container blocks, the pod shared
pool, init containers and sidecars, hugepages, NUMA extension, errors,
re-admission, RemoveContainer keeping the reservation, gates off).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from podnuma.api.featuregates import FeatureGates
from podnuma.api.kubeletconfig import KubeletConfig, ReservedMemory
from podnuma.api.pod import Container, Pod, PodLevelResources
from podnuma.api.qos import GUARANTEED, compute_pod_qos
from podnuma.api.quantity import Quantity, parse_quantity
from podnuma.cm.admission import EmptyPodSharedPoolError
from podnuma.cm.memorymanager.checkpoint import decode_memory_checkpoint, encode_memory_checkpoint
from podnuma.cm.memorymanager.memory_manager import MemoryManager, new_memory_manager
from podnuma.cm.memorymanager.policy import MemoryManagerError
from podnuma.cm.memorymanager.policy_static import (
    ERR_NO_DEFAULT_AFFINITY,
    ERR_VIOLATES_ALLOCATIONS,
    StaticPolicy,
    new_static_policy,
)
from podnuma.cm.memorymanager.state import Block, MemoryManagerState, NUMANodeMap
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.manager import TopologyManager
from podnuma.cm.topologymanager.new_manager import new_topology_policy
from podnuma.machine.topology import CPUInfo, CPUTopology, Machine, NUMANode

from .helpers import GB, HP1G, MB, MEM, FakeAffinity, blk, hint, mask, numa, res

ON = FeatureGates.from_mapping({"PodLevelResourceManagers": True})
OFF = FeatureGates.defaults()  # PodLevelResources on, PodLevelResourceManagers off (v1.37 defaults)
ALL_OFF = FeatureGates.from_mapping(
    {
        "PodLevelResources": False,
        "InPlacePodLevelResourcesVerticalScaling": False,
        "PodLevelResourcesFixDefaulting": False,
        "PodLevelResourcesFixKubeletQOSClass": False,
    }
)

# two NUMA nodes of 16Gi with two 1Gi hugepages each, 512Mi reserved per node:
# 13.5Gi of memory and 2Gi of hugepages allocatable per node
NODES = (numa(0, 16 * GB, 2), numa(1, 16 * GB, 2))
SR = {0: {MEM: 512 * MB}, 1: {MEM: 512 * MB}}
NODE_MEM = 16 * GB - 512 * MB - 2 * GB

EMPTY_POOL = (
    "pod rejected, sum of exclusive container memory requests equals pod budget, leaving no memory for shared "
    "containers"
)


# -- builders ------------------------------------------------------------------------------------


def ctr(name: str, mem: str | None = None, *, cpu: str = "1", kind: str = "app", hp: str | None = None) -> Container:
    """A container: with ``mem`` Guaranteed-equivalent (requests = limits),
    without resources otherwise (it runs in the pod shared pool)."""
    reqs: dict[str, Quantity] = {}
    if mem is not None:
        reqs = res(cpu=cpu, memory=mem)
        if hp is not None:
            reqs[HP1G] = parse_quantity(hp)
    return Container(name, kind, reqs, reqs, restart_policy="Always" if kind == "sidecar" else None)  # type: ignore[arg-type]


def plpod(
    mem: str,
    apps: Sequence[Container],
    inits: Sequence[Container] = (),
    *,
    uid: str = "pod1",
    cpu: str = "8",
    hp: str | None = None,
    limits_mem: str | None = None,
) -> Pod:
    """A pod with pod-level resources (requests = limits unless ``limits_mem``)."""
    reqs = res(cpu=cpu, memory=mem)
    if hp is not None:
        reqs[HP1G] = parse_quantity(hp)
    lims = dict(reqs)
    if limits_mem is not None:
        lims[MEM] = parse_quantity(limits_mem)
    return Pod(
        uid=uid, name=uid, init_containers=tuple(inits), containers=tuple(apps),
        resources=PodLevelResources(requests=reqs, limits=lims),
    )  # fmt: skip


def classic(uid: str, apps: Sequence[Container]) -> Pod:
    return Pod(uid=uid, name=uid, containers=tuple(apps))


def policy(h: TopologyHint | None = None, gates: FeatureGates = ON) -> StaticPolicy:
    return new_static_policy(NODES, SR, FakeAffinity(h), gates)


def fresh(p: StaticPolicy) -> MemoryManagerState:
    s = MemoryManagerState()
    p.start(s)
    return s


def gi(n: float) -> int:
    return int(n * GB)


def m(numas: Sequence[int], size: float, type_: str = MEM) -> Block:
    return blk(numas, type_, gi(size))


def usage(s: MemoryManagerState) -> dict[int, tuple[int, list[int], dict[str, int]]]:
    """Per NUMA node: (assignments, cells, reserved bytes per type)."""
    return {
        nid: (node.number_of_assignments, list(node.cells), {t: tb.reserved for t, tb in node.memory_map.items()})
        for nid, node in s.get_machine_state().items()
    }


def free_of(s: MemoryManagerState, nid: int, type_: str = MEM) -> int:
    return s.get_machine_state()[nid].memory_map[type_].free


# -- AllocatePod: partition tables ----------------------------------------------------------------


@dataclass(frozen=True)
class AllocPodCase:
    name: str
    pod: Pod
    hint: TopologyHint | None
    pod_blocks: list[Block]
    containers: dict[str, list[Block]]
    # NUMA id -> (assignments, cells, reserved per type)
    machine: dict[int, tuple[int, list[int], dict[str, int]]] = field(default_factory=dict)


_ALLOC_POD_CASES = [
    AllocPodCase(
        "KEP pod scope example 1: shared pool only, every container gets the whole budget",
        plpod("4Gi", [ctr("container-1"), ctr("container-2"), ctr("container-3")]),
        hint([0], True),
        [m([0], 4)],
        {"container-1": [m([0], 4)], "container-2": [m([0], 4)], "container-3": [m([0], 4)]},
        {0: (1, [0], {MEM: gi(4), HP1G: 0}), 1: (0, [1], {MEM: 0, HP1G: 0})},
    ),
    AllocPodCase(
        "KEP pod scope example 2: container-1 2Gi exclusive, shared pool 2Gi",
        plpod("4Gi", [ctr("container-1", "2Gi", cpu="2"), ctr("container-2"), ctr("container-3")], cpu="4"),
        hint([0], True),
        [m([0], 4)],
        {"container-1": [m([0], 2)], "container-2": [m([0], 2)], "container-3": [m([0], 2)]},
        {0: (1, [0], {MEM: gi(4), HP1G: 0}), 1: (0, [1], {MEM: 0, HP1G: 0})},
    ),
    AllocPodCase(
        "KEP table: all containers exclusive (no shared container, no pool check)",
        plpod("5Gi", [ctr("c1", "3Gi", cpu="3"), ctr("c2", "1Gi"), ctr("c3", "1Gi")], cpu="5"),
        hint([1], True),
        [m([1], 5)],
        {"c1": [m([1], 3)], "c2": [m([1], 1)], "c3": [m([1], 1)]},
        {0: (0, [0], {MEM: 0, HP1G: 0}), 1: (1, [1], {MEM: gi(5), HP1G: 0})},
    ),
    AllocPodCase(
        "exclusive containers below the budget: the rest stays reserved for the pod",
        plpod("4Gi", [ctr("c1", "1Gi"), ctr("c2", "1Gi")]),
        hint([0], True),
        [m([0], 4)],
        {"c1": [m([0], 1)], "c2": [m([0], 1)]},
        {0: (1, [0], {MEM: gi(4), HP1G: 0})},
    ),
    AllocPodCase(
        "hugepages in the budget: one assignment per type and node",
        plpod("4Gi", [ctr("c1", "1Gi", hp="1Gi"), ctr("c2")], hp="2Gi"),
        hint([0], True),
        [m([0], 2, HP1G), m([0], 4)],
        {"c1": [m([0], 1, HP1G), m([0], 1)], "c2": [m([0], 1, HP1G), m([0], 3)]},
        {0: (2, [0], {MEM: gi(4), HP1G: gi(2)})},
    ),
    AllocPodCase(
        "hugepages budget fully used, no shared container: allowed",
        plpod("4Gi", [ctr("c1", "1Gi", hp="2Gi"), ctr("c2", "3Gi")], hp="2Gi"),
        hint([0], True),
        [m([0], 2, HP1G), m([0], 4)],
        {"c1": [m([0], 2, HP1G), m([0], 1)], "c2": [m([0], 3)]},
        {0: (2, [0], {MEM: gi(4), HP1G: gi(2)})},
    ),
    AllocPodCase(
        "a hugepages type outside the budget: exclusive block, the pool wraps (uint64, upstream quirk)",
        plpod("4Gi", [ctr("c1", "1Gi", hp="1Gi"), ctr("c2")]),
        hint([0], True),
        [m([0], 4)],
        {
            "c1": [m([0], 1, HP1G), m([0], 1)],
            "c2": [blk([0], HP1G, (1 << 64) - GB), m([0], 3)],
        },
        {0: (1, [0], {MEM: gi(4), HP1G: 0})},
    ),
    AllocPodCase(
        "exclusive memory without integer CPUs (1500m): still an exclusive block",
        plpod("2Gi", [ctr("c1", "1Gi", cpu="1500m"), ctr("c2")], cpu="2"),
        hint([0], True),
        [m([0], 2)],
        {"c1": [m([0], 1)], "c2": [m([0], 1)]},
    ),
    AllocPodCase(
        "a container with requests below its limits is not exclusive",
        plpod(
            "2Gi",
            [
                Container("c1", "app", res(cpu="1", memory="1Gi"), res(cpu="1", memory="2Gi")),
                ctr("c2", "1Gi"),
            ],
        ),
        hint([0], True),
        [m([0], 2)],
        {"c1": [m([0], 1)], "c2": [m([0], 1)]},
    ),
    AllocPodCase(
        "init, sidecar and app containers: exclusive init blocks are not subtracted, sidecars are",
        plpod(
            "4Gi",
            [ctr("c1", "1Gi"), ctr("c2")],
            [ctr("i1", "3Gi", kind="init"), ctr("s1", "1Gi", kind="sidecar"), ctr("i2", kind="init")],
        ),
        hint([0], True),
        [m([0], 4)],
        {
            "i1": [m([0], 3)],
            "s1": [m([0], 1)],
            "i2": [m([0], 3)],  # budget minus the sidecars declared before it
            "c1": [m([0], 1)],
            "c2": [m([0], 2)],  # budget - s1 - c1
        },
        {0: (1, [0], {MEM: gi(4), HP1G: 0})},
    ),
    AllocPodCase(
        "a shared init container may overlap sidecars declared after it",
        plpod("4Gi", [ctr("c1")], [ctr("i1", kind="init"), ctr("s1", "2Gi", kind="sidecar")]),
        hint([0], True),
        [m([0], 4)],
        {"i1": [m([0], 4)], "s1": [m([0], 2)], "c1": [m([0], 2)]},
    ),
    AllocPodCase(
        "a shared sidecar gets the final pod shared pool",
        plpod("2Gi", [ctr("c1", "1Gi")], [ctr("s1", kind="sidecar")]),
        hint([0], True),
        [m([0], 2)],
        {"s1": [m([0], 1)], "c1": [m([0], 1)]},
    ),
    AllocPodCase(
        "no stored hint: the default (narrowest, lowest id) hint",
        plpod("4Gi", [ctr("c1", "1Gi"), ctr("c2")]),
        None,
        [m([0], 4)],
        {"c1": [m([0], 1)], "c2": [m([0], 3)]},
    ),
    AllocPodCase(
        "a budget larger than one node: the hint is extended, memory spans NUMA nodes",
        plpod("20Gi", [ctr("c1", "4Gi"), ctr("c2")]),
        hint([1], True),
        [m([0, 1], 20)],
        {"c1": [m([0, 1], 4)], "c2": [m([0, 1], 16)]},
        # updateMachineState fills the lowest NUMA id first
        {
            0: (1, [0, 1], {MEM: NODE_MEM, HP1G: 0}),
            1: (1, [0, 1], {MEM: gi(20) - NODE_MEM, HP1G: 0}),
        },
    ),
]


@pytest.mark.parametrize("case", _ALLOC_POD_CASES, ids=[c.name for c in _ALLOC_POD_CASES])
def test_allocate_pod(case: AllocPodCase) -> None:
    p = policy(case.hint)
    s = fresh(p)
    p.allocate_pod(s, case.pod)
    assert s.get_pod_memory_assignments() == {case.pod.uid: case.pod_blocks}
    assert s.get_memory_assignments() == {case.pod.uid: case.containers}
    got = usage(s)
    for nid, expected in case.machine.items():
        assert got[nid] == expected
    # only the pod blocks are accounted: the reserved total equals the budget
    for type_ in {b.type for b in case.pod_blocks}:
        reserved = sum(u[2].get(type_, 0) for u in got.values())
        assert reserved == sum(b.size for b in case.pod_blocks if b.type == type_)
    # and the state it leaves is the one validateState expects after a restart
    p.validate_state(s)


# -- AllocatePod: errors, the state stays untouched ---------------------------------------------


@dataclass(frozen=True)
class AllocPodErrorCase:
    name: str
    pod: Pod
    hint: TopologyHint | None
    error: type[Exception]
    message: str
    pre: Sequence[Pod] = ()


_ERROR_CASES = [
    AllocPodErrorCase(
        "KEP pod scope example 3: exclusive requests equal the budget with a shared container",
        plpod("5Gi", [ctr("container-1", "3Gi", cpu="3"), ctr("container-2", "2Gi", cpu="2"), ctr("container-3")], cpu="5"),
        hint([0], True),
        EmptyPodSharedPoolError,
        EMPTY_POOL,
    ),
    AllocPodErrorCase(
        "the empty-pool check is >=: a shared sidecar counts as a shared container",
        plpod("2Gi", [ctr("c1", "2Gi")], [ctr("s1", kind="sidecar")]),
        hint([0], True),
        EmptyPodSharedPoolError,
        EMPTY_POOL,
    ),
    AllocPodErrorCase(
        "hugepages budget used up by exclusive containers",
        plpod("4Gi", [ctr("c1", "1Gi", hp="1Gi"), ctr("c2")], hp="1Gi"),
        hint([0], True),
        EmptyPodSharedPoolError,
        "pod rejected, sum of exclusive container hugepages-1Gi requests equals pod budget, leaving no memory "
        "for shared containers",
    ),
    AllocPodErrorCase(
        "a shared init container after sidecars that use the whole budget",
        plpod("2Gi", [ctr("c1", "1Gi")], [ctr("s1", "2Gi", kind="sidecar"), ctr("i1", kind="init")]),
        hint([0], True),
        EmptyPodSharedPoolError,
        "pod rejected, pod has shared init containers but no memory available for them",
    ),
    AllocPodErrorCase(
        "no NUMA node (group) can hold the budget: a plain error (UnexpectedAdmissionError)",
        plpod("40Gi", [ctr("c1")]),
        None,
        MemoryManagerError,
        ERR_NO_DEFAULT_AFFINITY,
    ),
    AllocPodErrorCase(
        "a multi-NUMA budget on a node holding a single-NUMA allocation",
        plpod("20Gi", [ctr("c1")]),
        hint([0, 1], True),
        MemoryManagerError,
        ERR_VIOLATES_ALLOCATIONS,
        pre=(plpod("1Gi", [ctr("c1")], uid="other"),),
    ),
]


@pytest.mark.parametrize("case", _ERROR_CASES, ids=[c.name for c in _ERROR_CASES])
def test_allocate_pod_errors(case: AllocPodErrorCase) -> None:
    p = policy(case.hint)
    s = fresh(p)
    for other in case.pre:
        new_static_policy(NODES, SR, FakeAffinity(hint([0], True)), ON).allocate_pod(s, other)
    before = (s.get_machine_state(), s.get_memory_assignments(), s.get_pod_memory_assignments())
    with pytest.raises(case.error) as info:
        p.allocate_pod(s, case.pod)
    assert str(info.value) == case.message
    if case.error is EmptyPodSharedPoolError:
        assert getattr(info.value, "reason", None) == "EmptyPodSharedPoolError"
    else:
        assert not hasattr(info.value, "reason")
    assert (s.get_machine_state(), s.get_memory_assignments(), s.get_pod_memory_assignments()) == before


def test_fractional_container_request_is_an_empty_pool_error() -> None:
    # validatePodScopeResources returns getContainerRequestedResources' error
    # and AllocatePod wraps whatever it returns (upstream quirk)
    frac = {"cpu": parse_quantity("1"), MEM: parse_quantity("1500m")}
    pod = plpod("2Gi", [Container("c1", "app", frac, frac), ctr("c2")])
    p = policy(hint([0], True))
    s = fresh(p)
    with pytest.raises(EmptyPodSharedPoolError, match=r"^\[memorymanager\] failed to represent quantity as int64$"):
        p.allocate_pod(s, pod)
    assert p.get_pod_topology_hints(s, pod) == {MEM: []}


# -- AllocatePod: pods it leaves alone ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "pod", "gates"),
    [
        ("Burstable pod-level pod", plpod("2Gi", [ctr("c1")], limits_mem="4Gi"), ON),
        ("classic pod (the topology manager never calls AllocatePod for it)", classic("pod1", [ctr("c1", "1Gi")]), ON),
        ("pod-level pod, PodLevelResourceManagers off", plpod("2Gi", [ctr("c1", "1Gi"), ctr("c2")]), OFF),
    ],
)
def test_allocate_pod_noop(name: str, pod: Pod, gates: FeatureGates) -> None:
    p = policy(hint([0], True), gates)
    s = fresh(p)
    before = s.get_machine_state()
    p.allocate_pod(s, pod)
    assert s.get_memory_assignments() == {}
    assert s.get_pod_memory_assignments() == {}
    assert s.get_machine_state() == before


@pytest.mark.parametrize("gates", [OFF, ALL_OFF], ids=["PodLevelResourceManagers off", "both gates off"])
def test_gates_off_pod_level_pod_is_unmanaged(gates: FeatureGates) -> None:
    pod = plpod("2Gi", [ctr("c1", "1Gi"), ctr("c2")])
    p = policy(hint([0], True), gates)
    s = fresh(p)
    assert p.get_pod_topology_hints(s, pod) is None
    for c in pod.containers:
        assert p.get_topology_hints(s, pod, c) is None
        p.allocate(s, pod, c)
    p.allocate_pod(s, pod)
    assert s.get_memory_assignments() == {}
    assert s.get_pod_memory_assignments() == {}


def test_gate_off_qos_still_comes_from_pod_level_resources() -> None:
    # with PodLevelResources on, a pod whose containers alone would be
    # BestEffort is Guaranteed through spec.resources: it is still skipped
    # for being a pod-level pod, not for its QoS
    pod = plpod("2Gi", [ctr("c1"), ctr("c2")])
    p = policy(hint([0], True), OFF)
    assert compute_pod_qos(pod, pod_level_resources=True) == GUARANTEED
    s = fresh(p)
    assert p.get_pod_topology_hints(s, pod) is None
    p.allocate_pod(s, pod)
    assert s.get_memory_assignments() == {}


# -- GetPodTopologyHints: the pod-level path --------------------------------------------------


def _hints(entries: Sequence[tuple[Sequence[int], bool]]) -> list[TopologyHint]:
    return [hint(bits, pref) for bits, pref in entries]


_ALL_MASKS = _hints([([0], True), ([1], True), ([0, 1], False)])


@pytest.mark.parametrize(
    ("name", "pod", "expected"),
    [
        (
            "hints are computed on the pod budget",
            plpod("4Gi", [ctr("c1", "1Gi"), ctr("c2")]),
            {MEM: _ALL_MASKS},
        ),
        (
            "a budget larger than one node: only the group, preferred",
            plpod("20Gi", [ctr("c1")]),
            {MEM: _hints([([0, 1], True)])},
        ),
        (
            "hugepages in the budget: a hint list per type",
            plpod("4Gi", [ctr("c1")], hp="1Gi"),
            {HP1G: _ALL_MASKS, MEM: _ALL_MASKS},
        ),
        (
            "validation fails: an empty (not nil) list per requested type",
            plpod("5Gi", [ctr("c1", "3Gi"), ctr("c2", "2Gi"), ctr("c3")]),
            {MEM: []},
        ),
        (
            "validation fails with hugepages: every type gets an empty list",
            plpod("4Gi", [ctr("c1", "4Gi"), ctr("c2")], hp="1Gi"),
            {HP1G: [], MEM: []},
        ),
        (
            "nothing fits: an empty map (don't care)",
            plpod("40Gi", [ctr("c1")]),
            {},
        ),
        (
            "Burstable pod-level pod: no hints",
            plpod("2Gi", [ctr("c1")], limits_mem="4Gi"),
            None,
        ),
    ],
)
def test_get_pod_topology_hints(name: str, pod: Pod, expected: Mapping[str, list[TopologyHint]] | None) -> None:
    p = policy()
    assert p.get_pod_topology_hints(fresh(p), pod) == expected


def test_pod_topology_hints_see_the_pod_reservation_of_others() -> None:
    p = policy(hint([0], True))
    s = fresh(p)
    p.allocate_pod(s, plpod("12Gi", [ctr("c1")], uid="big"))
    pod = plpod("4Gi", [ctr("c1", "1Gi"), ctr("c2")])
    assert p.get_pod_topology_hints(s, pod) == {MEM: _hints([([1], True)])}


@pytest.mark.parametrize(
    ("name", "pod_blocks", "expected"),
    [
        # v1.37.2 regenerates from the first container holding blocks (c1,
        # 1Gi) against the pod totals (4Gi): never a match, whatever the pod
        # blocks say
        ("pod blocks of the pod's size", [m([1], 4)], None),
        ("a multi-NUMA reservation", [m([0, 1], 4)], None),
        ("pod blocks of another size", [m([1], 3)], None),
        ("pod blocks of other types", [m([1], 4), m([1], 1, HP1G)], None),
    ],
)
def test_pod_topology_hints_of_a_restored_pod(
    name: str, pod_blocks: list[Block], expected: Mapping[str, list[TopologyHint]] | None
) -> None:
    p = policy()
    s = fresh(p)
    pod = plpod("4Gi", [ctr("c1", "1Gi"), ctr("c2")])
    s.set_pod_memory_blocks(pod.uid, pod_blocks)
    s.set_memory_blocks(pod.uid, "c1", [m([1], 1)])
    s.set_memory_blocks(pod.uid, "c2", [m([1], 3)])
    assert p.get_pod_topology_hints(s, pod) == expected


# -- re-admission, RemoveContainer, stale state -----------------------------------------------


def test_re_admission_reserves_the_budget_again() -> None:
    # v1.37.2's AllocatePod does not look at the pod's existing entries: a
    # re-admission reserves the budget a second time (the first reservation
    # is in no container entry any more) and the entries follow the new hint
    pod = plpod("4Gi", [ctr("c1", "1Gi"), ctr("c2")])
    p = policy(hint([1], True))
    s = fresh(p)
    p.allocate_pod(s, pod)
    free1 = s.get_machine_state()[1].memory_map[MEM].free
    again = policy(hint([0], True))
    again.allocate_pod(s, pod)
    ms = s.get_machine_state()
    assert ms[1].memory_map[MEM].free == free1
    assert ms[0].memory_map[MEM].reserved == gi(4)
    assert s.get_pod_memory_assignments() == {pod.uid: [m([0], 4)]}
    assert s.get_memory_assignments()[pod.uid]["c1"] == [m([0], 1)]


def test_re_admission_needs_room_again() -> None:
    pod = plpod("12Gi", [ctr("c1")])
    p = policy(hint([0], True))
    s = fresh(p)
    p.allocate_pod(s, pod)
    policy(hint([1], True)).allocate_pod(s, plpod("12Gi", [ctr("c1")], uid="other"))
    with pytest.raises(MemoryManagerError):
        policy().allocate_pod(s, pod)


def test_remove_container_keeps_the_reservation_until_the_last_entry() -> None:
    pod = plpod(
        "4Gi",
        [ctr("c1", "1Gi"), ctr("c2")],
        [ctr("i1", "1Gi", kind="init"), ctr("s1", "1Gi", kind="sidecar")],
    )
    p = policy(hint([0], True))
    s = fresh(p)
    empty = s.get_machine_state()
    p.allocate_pod(s, pod)
    held = s.get_machine_state()
    for name in ("c1", "i1", "c2"):
        p.remove_container(s, pod.uid, name)
        assert s.get_machine_state() == held
        assert s.get_pod_memory_blocks(pod.uid) == [m([0], 4)]
        assert s.get_memory_blocks(pod.uid, name) is None
    p.remove_container(s, pod.uid, "c1")  # idempotent
    assert s.get_machine_state() == held
    p.remove_container(s, pod.uid, "s1")
    assert s.get_machine_state() == empty
    assert s.get_pod_memory_assignments() == {}
    assert s.get_memory_assignments() == {}


def test_remove_container_with_gate_off_ignores_pod_entries() -> None:
    # a pod entry is only honoured with the gate on (upstream RemoveContainer)
    p = policy(hint([0], True))
    s = fresh(p)
    pod = plpod("4Gi", [ctr("c1", "1Gi"), ctr("c2")])
    p.allocate_pod(s, pod)
    off = policy(hint([0], True), OFF)
    off.remove_container(s, pod.uid, "c1")
    assert free_of(s, 0) == NODE_MEM - gi(4) + gi(1)


def _mgr(active: dict[str, set[str]] | None, h: TopologyHint | None = None, gates: FeatureGates = ON) -> MemoryManager:
    cfg = KubeletConfig(
        memory_manager_policy="Static",
        reserved_memory=(ReservedMemory(0, {MEM: parse_quantity("512Mi")}), ReservedMemory(1, {MEM: parse_quantity("512Mi")})),
    )  # fmt: skip
    return new_memory_manager(
        cfg, _machine(NODES), FakeAffinity(h or hint([0], True)), gates,
        active_pods=None if active is None else (lambda: active),
        reservation={MEM: parse_quantity("1Gi")},
    )  # fmt: skip


def _machine(nodes: Sequence[NUMANode]) -> Machine:
    cpus = {i: CPUInfo(numa_node=n.id, socket=n.id, core=i, uncore_cache=n.id) for i, n in enumerate(nodes)}
    topo = CPUTopology(cpus, num_cpus=len(cpus), num_sockets=len(nodes), num_cores=len(cpus))
    return Machine(topo, tuple(nodes))


def test_remove_stale_state_releases_the_pod_with_its_last_container() -> None:
    active: dict[str, set[str]] = {"pod1": {"c1", "c2"}}
    mgr = _mgr(active)
    pod = plpod("4Gi", [ctr("c1", "1Gi"), ctr("c2")])
    mgr.allocate_pod(pod)
    held = mgr.machine_state()
    active["pod1"] = {"c1"}  # c2 is gone: its entry goes, the reservation stays
    mgr.remove_stale_state()
    assert mgr.get_memory_blocks("pod1", "c2") == []
    assert mgr.get_memory_blocks("pod1", "c1") == [m([0], 1)]
    assert mgr.machine_state() == held
    del active["pod1"]
    mgr.remove_stale_state()
    assert mgr.get_pod_memory_blocks("pod1") == []
    assert mgr.machine_state()[0].memory_map[MEM].reserved == 0
    assert mgr.machine_state()[0].number_of_assignments == 0


def test_add_container_releases_init_entries_but_not_the_reservation() -> None:
    mgr = _mgr(None)
    pod = plpod("4Gi", [ctr("c1", "1Gi")], [ctr("i1", "3Gi", kind="init"), ctr("s1", "1Gi", kind="sidecar")])
    mgr.allocate_pod(pod)
    held = mgr.machine_state()
    mgr.add_container(pod, pod.containers[0])
    assert mgr.get_memory_blocks("pod1", "i1") == []
    assert mgr.machine_state() == held
    mgr.remove_container("pod1", "c1")
    assert mgr.machine_state() == held  # the sidecar's entry still holds the pod
    mgr.remove_container("pod1", "s1")
    assert mgr.machine_state()[0].memory_map[MEM].reserved == 0


# -- PodLevelResources view ----------------------------------------------------------------------------


def test_podresources_pod_scope() -> None:
    mgr = _mgr(None)
    pod = plpod("4Gi", [ctr("exclusive", "1Gi", hp="1Gi"), ctr("shared")], [ctr("init", kind="init")], hp="2Gi")
    mgr.allocate_pod(pod)
    assert mgr.podresources_pod_memory(pod) == [m([0], 2, HP1G), m([0], 4)]
    assert mgr.podresources_container_memory(pod, pod.containers[0]) == [m([0], 1, HP1G), m([0], 1)]
    assert mgr.podresources_container_memory(pod, pod.containers[1]) == []
    assert mgr.podresources_container_memory(pod, pod.init_containers[0]) == []
    # the pod's shared pool is what the state gives the shared container
    assert mgr.get_memory_blocks("pod1", "shared") == [m([0], 1, HP1G), m([0], 3)]


def test_podresources_container_scope_and_classic_pods() -> None:
    mgr = _mgr(None)
    # container scope: per-container allocation, no pod entry
    pod = plpod("4Gi", [ctr("exclusive", "1Gi"), ctr("shared")])
    for c in pod.containers:
        mgr.allocate(pod, c)
    assert mgr.podresources_pod_memory(pod) == []
    assert mgr.podresources_container_memory(pod, pod.containers[0]) == [m([0], 1)]
    assert mgr.podresources_container_memory(pod, pod.containers[1]) == []
    plain = classic("plain", [ctr("c", "1Gi")])
    mgr.allocate(plain, plain.containers[0])
    assert mgr.podresources_pod_memory(plain) == []
    assert mgr.podresources_container_memory(plain, plain.containers[0]) == [m([0], 1)]


def test_podresources_gate_off() -> None:
    mgr = _mgr(None, gates=OFF)
    pod = plpod("4Gi", [ctr("exclusive", "1Gi"), ctr("shared")])
    mgr.allocate_pod(pod)
    for c in pod.containers:
        mgr.allocate(pod, c)
    assert mgr.podresources_pod_memory(pod) == []
    assert [mgr.podresources_container_memory(pod, c) for c in pod.containers] == [[], []]


# -- through the topology manager (e2e: empty pod shared pool) ------------------------------------


@pytest.mark.parametrize(
    ("tm_policy", "reason", "message"),
    [
        ("best-effort", "EmptyPodSharedPoolError", EMPTY_POOL),
        (
            "restricted",
            "TopologyAffinityError",
            "Pod Scope pod with pod-level resources failed admission under pod-scope topology manager",
        ),
        (
            "single-numa-node",
            "TopologyAffinityError",
            "Pod Scope pod with pod-level resources failed admission under pod-scope topology manager",
        ),
    ],
)
def test_empty_pod_shared_pool_through_the_topology_manager(tm_policy: str, reason: str, message: str) -> None:
    machine = _machine(NODES)
    merge, _, _ = new_topology_policy(tm_policy, machine, {}, ON)
    tm = TopologyManager(merge, "pod", pod_level_resource_managers=True)
    mgr = _mgr(None)
    mgr.policy.affinity = tm  # type: ignore[attr-defined]
    tm.add_hint_provider(mgr)
    pod = plpod("5Gi", [ctr("c1", "3Gi"), ctr("c2", "2Gi"), ctr("c3")])
    result = tm.admit(pod)
    assert (result.admit, result.reason, result.message) == (False, reason, message)
    assert mgr.get_pod_memory_blocks("pod1") == []
    ok = plpod("4Gi", [ctr("c1", "2Gi"), ctr("c2")], uid="ok")
    assert tm.admit(ok).admit
    assert mgr.get_pod_memory_blocks("ok") == [m([0], 4)]
    assert tm.get_affinity("ok", "c2") == hint([0], True)


# -- upstream TestMemoryManagerRestoreState (policy_static_restore_test.go) ----------------------
# returnMachineInfo: two NUMA nodes of 10Gi with five 1Gi hugepages; 1Gi of
# memory reserved on each. getPodWithContainersAndPodLevelResources is
# written here with a CPU request on the pod and its containers so that the
# pod is Guaranteed.

_UPSTREAM_NODES = (numa(0, 10 * GB, 5), numa(1, 10 * GB, 5))


@dataclass(frozen=True)
class RestoreCase:
    name: str
    gates: FeatureGates
    pod_memory: str | None
    containers: tuple[tuple[str, str], ...]
    expect_pod_blocks: bool
    allocation_affinity: tuple[int, ...] | None
    expected_affinity: tuple[int, ...] | None


# expected_affinity: the pod-scope memory hint after the restart. v1.37.2's
# GetPodTopologyHints regenerates it from the first container holding blocks,
# compared with the pod's totals; a container's blocks never hold the whole
# pod here (pod-level budget above the container, or two containers), so
# regenerateHints returns nil and the provider has no memory hint.
_RESTORE_CASES = [
    RestoreCase("PodLevelResources and PodLevelResourceManagers enabled", ON, "128Mi",
                (("container1", "100Mi"),), True, None, None),
    RestoreCase("Pod topology hint is restored from a non-zero NUMA node", ON, "128Mi",
                (("container1", "100Mi"),), True, (1,), None),
    RestoreCase("Pod topology hint is restored from a multi-container pod allocation", ON, "128Mi",
                (("container1", "50Mi"), ("container2", "50Mi")), True, None, None),
    RestoreCase("PodLevelResources enabled, PodLevelResourceManagers disabled", OFF, "128Mi",
                (("container1", "100Mi"),), False, None, None),
    RestoreCase("Container-level pod, features enabled", ON, None,
                (("container1", "100Mi"), ("container2", "100Mi")), False, None, None),
    RestoreCase("Container-level pod, features disabled", ALL_OFF, None,
                (("container1", "100Mi"), ("container2", "100Mi")), False, None, None),
    RestoreCase("Container-level pod, one container", ON, None,
                (("container1", "100Mi"),), False, None, (0,)),
    RestoreCase("Container-level pod, one container on NUMA 1", ON, None,
                (("container1", "100Mi"),), False, (1,), (1,)),
]  # fmt: skip


def _upstream_mgr(gates: FeatureGates, affinity: FakeAffinity, checkpoint: bytes | None = None) -> MemoryManager:
    cfg = KubeletConfig(
        memory_manager_policy="Static",
        reserved_memory=(ReservedMemory(0, {MEM: parse_quantity("1Gi")}), ReservedMemory(1, {MEM: parse_quantity("1Gi")})),
    )  # fmt: skip
    data = None
    if checkpoint is not None:
        data = decode_memory_checkpoint(
            checkpoint, pod_level_resource_managers=gates.enabled("PodLevelResourceManagers")
        )
    return new_memory_manager(
        cfg, _machine(_UPSTREAM_NODES), affinity, gates, checkpoint=data,
        reservation={MEM: parse_quantity("2Gi")},
    )  # fmt: skip


def _restore_pod(case: RestoreCase) -> Pod:
    apps = [ctr(name, mem, cpu="100m") for name, mem in case.containers]
    if case.pod_memory is None:
        return classic("pod1", apps)
    return plpod(case.pod_memory, apps, cpu="1")


def _restore_round(case: RestoreCase) -> tuple[Pod, MemoryManager, tuple[object, ...]]:
    pod = _restore_pod(case)
    h = None if case.allocation_affinity is None else hint(case.allocation_affinity, True)
    mgr = _upstream_mgr(case.gates, FakeAffinity(h))
    pod_level = case.gates.enabled("PodLevelResourceManagers") and pod.resources is not None
    if pod_level:
        mgr.allocate_pod(pod)
    else:
        for c in pod.containers:
            mgr.allocate(pod, c)
            mgr.add_container(pod, c)
    assert bool(mgr.get_pod_memory_blocks(pod.uid)) == case.expect_pod_blocks
    before = (mgr.state.get_pod_memory_assignments(), mgr.state.get_memory_assignments(), mgr.machine_state())
    mgr2 = _upstream_mgr(case.gates, FakeAffinity(), encode_memory_checkpoint(mgr.checkpoint_data()))
    return pod, mgr2, before


@pytest.mark.parametrize("case", _RESTORE_CASES, ids=[c.name for c in _RESTORE_CASES])
def test_memory_manager_restore_state(case: RestoreCase) -> None:
    pod, mgr2, before = _restore_round(case)
    pod_blocks, assignments, machine_state = before
    restored = mgr2.get_pod_memory_blocks(pod.uid)
    if case.expect_pod_blocks:
        assert restored and len(restored) == len(mgr2.state.get_pod_memory_assignments()[pod.uid])
        assert {pod.uid: restored} == pod_blocks
    else:
        assert restored == []
    for c in pod.containers:
        blocks = mgr2.get_memory_blocks(pod.uid, c.name)
        if case.gates is OFF:
            assert blocks == []  # allocation skipped for the pod-level pod
        else:
            assert blocks != []
    if case.expect_pod_blocks:
        # v1.37.2 re-admission reserves the pod budget again
        mgr2.allocate_pod(pod)
        reserved_before = sum(n.memory_map[MEM].reserved for n in machine_state.values())  # type: ignore[attr-defined]
        reserved_after = sum(n.memory_map[MEM].reserved for n in mgr2.machine_state().values())
        assert reserved_after == 2 * reserved_before


@pytest.mark.parametrize("case", _RESTORE_CASES, ids=[c.name for c in _RESTORE_CASES])
def test_memory_manager_restore_state_hints(case: RestoreCase) -> None:
    pod, mgr2, _ = _restore_round(case)
    hints = mgr2.get_pod_topology_hints(pod)
    memory_hints = (hints or {}).get(MEM) or []
    if case.expected_affinity is None:
        assert memory_hints == []
    else:
        assert memory_hints == [TopologyHint(mask(*case.expected_affinity), True)]


def test_restore_partial_pod_checkpoint_v137() -> None:
    """The kubelet stops right after the pod entry was written (no container
    entries, the machine state untouched). v1.37.2 starts on that state,
    computes the pod hint afresh (no container holds blocks) and AllocatePod
    allocates the pod again: container blocks and a reservation."""
    pod = plpod("128Mi", [ctr("container1", "100Mi", cpu="100m")], cpu="1")
    mgr = _upstream_mgr(ON, FakeAffinity())
    pristine: NUMANodeMap = mgr.machine_state()
    mgr.state.set_pod_memory_blocks(pod.uid, [blk([0], MEM, 128 * MB)])
    mgr2 = _upstream_mgr(ON, FakeAffinity(), encode_memory_checkpoint(mgr.checkpoint_data()))
    machine = _machine(_UPSTREAM_NODES)
    merge, _, _ = new_topology_policy("best-effort", machine, {}, ON)
    tm = TopologyManager(merge, "pod", pod_level_resource_managers=True)
    mgr2.policy.affinity = tm  # type: ignore[attr-defined]
    tm.add_hint_provider(mgr2)
    assert tm.admit(pod).admit
    assert tm.get_affinity(pod.uid, "container1") == hint([0], True)
    assert mgr2.get_memory_blocks(pod.uid, "container1") == [blk([0], MEM, 100 * MB)]
    assert mgr2.machine_state()[0].memory_map[MEM].reserved == pristine[0].memory_map[MEM].reserved + 128 * MB

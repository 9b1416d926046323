"""Device topology hints and aligned allocation: upstream
``pkg/kubelet/cm/devicemanager/topology_hints_test.go`` (TestGetTopologyHints,
TestTopologyAlignedAllocation, TestGetPreferredAllocationParameters as
reuse cases, TestGetPodDeviceRequest, TestGetPodTopologyHints) plus sidecar
and reuse cases of podnuma's own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from podnuma.api.pod import Container, Pod
from podnuma.cm.devicemanager.topology_hints import (
    device_has_topology_alignment,
    generate_device_topology_hints,
    pod_device_request,
)
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.machine.topology import Device
from tests.cm.devicemanager.helpers import (
    ActivePods,
    Allocated,
    D,
    H,
    ctr,
    ctr_res,
    manager,
    pod,
    sorted_hints,
)

ExpectedHints = Mapping[str, Sequence[TopologyHint] | None]


@dataclass(frozen=True)
class HintCase:
    name: str
    pod: Pod
    devices: Mapping[str, Sequence[Device]]
    expected: ExpectedHints
    allocated: Allocated = field(default_factory=dict)


def _one(**limits: int) -> Pod:
    return pod("fakePod", [ctr_res("fakeContainer", "app", 0, limits)])


FOUR_TWO_PER_NODE = [D("Dev1", 0), D("Dev2", 0), D("Dev3", 1), D("Dev4", 1)]
ALTERNATING = [D("Dev1", 0), D("Dev2", 1), D("Dev3", 0), D("Dev4", 1)]
ALL_PREF = [H(0), H(1), H(0, 1, p=False)]

# getCommonTestCases
COMMON = [
    HintCase(
        "Single Request, no alignment",
        _one(testdevice=1),
        # Dev3 has an empty node list, Dev4 a nil one upstream: both are "no topology".
        {"testdevice": [D("Dev1"), D("Dev2"), D("Dev3"), D("Dev4")]},
        {"testdevice": None},
    ),
    HintCase(
        "Single Request, only one with alignment",
        _one(testdevice=1),
        {"testdevice": [D("Dev1"), D("Dev2", 1)]},
        # v1.37.2: only the NUMA nodes hosting devices are combined
        {"testdevice": [H(1)]},
    ),
    HintCase(
        "Single Request, one device per socket",
        _one(testdevice=1),
        {"testdevice": [D("Dev1", 0), D("Dev2", 1)]},
        {"testdevice": ALL_PREF},
    ),
    HintCase(
        "Request for 2, one device per socket",
        _one(testdevice=2),
        {"testdevice": [D("Dev1", 0), D("Dev2", 1)]},
        {"testdevice": [H(0, 1)]},
    ),
    HintCase(
        "Request for 2, 2 devices per socket",
        _one(testdevice=2),
        {"testdevice": ALTERNATING},
        {"testdevice": ALL_PREF},
    ),
    HintCase(
        "Request for 2, optimal on 1 NUMA node, forced cross-NUMA",
        _one(testdevice=2),
        {"testdevice": ALTERNATING},
        {"testdevice": [H(0, 1, p=False)]},
        {"fakePod": {"fakeOtherContainer": {"testdevice": ["Dev1", "Dev2"]}}},
    ),
    HintCase(
        "2 device types, mixed configuration",
        _one(testdevice1=2, testdevice2=1),
        {"testdevice1": ALTERNATING, "testdevice2": [D("Dev1", 0)]},
        {"testdevice1": ALL_PREF, "testdevice2": [H(0)]},
    ),
    HintCase(
        "Single device type, more requested than available",
        _one(testdevice=6),
        {"testdevice": FOUR_TWO_PER_NODE},
        {"testdevice": []},
    ),
    HintCase(
        "Single device type, all already allocated to container",
        _one(testdevice=2),
        {"testdevice": [D("Dev1", 0), D("Dev2", 0)]},
        {"testdevice": [H(0)]},
        {"fakePod": {"fakeContainer": {"testdevice": ["Dev1", "Dev2"]}}},
    ),
    HintCase(
        "Single device type, less already allocated to container than requested",
        _one(testdevice=4),
        {"testdevice": FOUR_TWO_PER_NODE},
        {"testdevice": []},
        {"fakePod": {"fakeContainer": {"testdevice": ["Dev1", "Dev2"]}}},
    ),
    HintCase(
        "Single device type, more already allocated to container than requested",
        _one(testdevice=2),
        {"testdevice": FOUR_TWO_PER_NODE},
        {"testdevice": []},
        {"fakePod": {"fakeContainer": {"testdevice": ["Dev1", "Dev2", "Dev3", "Dev4"]}}},
    ),
]

_THREE_APPS = [
    ctr("fakeContainer1", testdevice1=1, testdevice2=1),
    ctr("fakeContainer2", index=1, testdevice1=1, testdevice2=1),
    ctr("fakeContainer3", index=2, notRegistered=1),
]

# getPodScopeTestCases
POD_SCOPE = [
    HintCase(
        "2 device types, user container only",
        pod("fakePod", [
            ctr("fakeContainer1", testdevice1=2),
            ctr("fakeContainer2", index=1, testdevice2=2),
            ctr("fakeContainer3", index=2, notRegistered=2),
        ]),
        {"testdevice1": FOUR_TWO_PER_NODE, "testdevice2": FOUR_TWO_PER_NODE},
        {"testdevice1": ALL_PREF, "testdevice2": ALL_PREF},
    ),
    HintCase(
        "2 device types, request resources for init containers and user container",
        pod(
            "fakePod",
            _THREE_APPS,
            init=[
                ctr("init-0", kind="init", testdevice1=1, testdevice2=1),
                ctr("init-1", kind="init", index=1, testdevice1=1, testdevice2=2),
            ],
        ),
        {"testdevice1": FOUR_TWO_PER_NODE, "testdevice2": FOUR_TWO_PER_NODE},
        {"testdevice1": ALL_PREF, "testdevice2": ALL_PREF},
    ),
    HintCase(
        "2 device types, user container only, optimal on 1 NUMA node, forced cross-NUMA",
        pod("fakePod", _THREE_APPS),
        {"testdevice1": FOUR_TWO_PER_NODE, "testdevice2": FOUR_TWO_PER_NODE},
        {"testdevice1": [H(0, 1, p=False)], "testdevice2": [H(0, 1, p=False)]},
        {"fakeOtherPod": {"fakeOtherContainer": {"testdevice1": ["Dev1", "Dev3"],
                                                 "testdevice2": ["Dev1", "Dev3"]}}},
    ),
    # podnuma: a sidecar's devices count next to the app containers' and
    # within the init phase (PodLimits): max(2 + 1, 1 + 1) = 3 -> both nodes.
    HintCase(
        "sidecar counts in both phases",
        pod(
            "fakePod",
            [ctr("app", testdevice=1)],
            init=[ctr("side", kind="sidecar", testdevice=1), ctr("init", kind="init", index=1, testdevice=2)],
        ),
        {"testdevice": FOUR_TWO_PER_NODE},
        {"testdevice": [H(0, 1)]},
    ),
    # podnuma: the pod's allocated devices (union over its containers) are
    # regenerated as hints.
    HintCase(
        "pod already holds its devices",
        pod("fakePod", [ctr("a", testdevice=1), ctr("b", index=1, testdevice=1)]),
        {"testdevice": FOUR_TWO_PER_NODE},
        {"testdevice": [H(1), H(0, 1, p=False)]},
        {"fakePod": {"a": {"testdevice": ["Dev3"]}, "b": {"testdevice": ["Dev4"]}}},
    ),
]


def _check(got: Mapping[str, list[TopologyHint] | None], expected: ExpectedHints) -> None:
    assert set(got) == set(expected)
    for resource, hints in expected.items():
        want = sorted_hints(hints)
        have = sorted_hints(got[resource])
        assert have == want, resource
        if hints is not None:
            assert got[resource] is not None


@pytest.mark.parametrize("case", COMMON, ids=lambda c: c.name)
def test_get_topology_hints(case: HintCase) -> None:
    m, _ = manager(case.devices, allocated=case.allocated, active=ActivePods(case.pod))
    hints = m.get_topology_hints(case.pod, case.pod.containers[0])
    _check(hints, case.expected)


@pytest.mark.parametrize("case", COMMON + POD_SCOPE, ids=lambda c: c.name)
def test_get_pod_topology_hints(case: HintCase) -> None:
    m, _ = manager(
        case.devices, allocated=case.allocated, active=ActivePods(case.pod, "fakeOtherPod")
    )
    _check(m.get_pod_topology_hints(case.pod), case.expected)


def test_hints_are_nil_vs_empty_and_skip_unknown_resources() -> None:
    """A resource the device manager does not know gets no entry at all; a
    container without device resources gets an empty map."""
    m, _ = manager({"testdevice": [D("Dev1", 0)]})
    p = pod("p", [ctr("c", testdevice=1, notRegistered=3), ctr("d", index=1, cpu=1)])
    assert m.get_topology_hints(p, p.containers[0]) == {"testdevice": [H(0)]}
    assert m.get_topology_hints(p, p.containers[1]) == {}
    assert m.get_pod_topology_hints(p) == {"testdevice": [H(0)]}


def test_hints_regenerated_from_held_devices_after_stale_collection() -> None:
    """Hints run UpdateAllocatedDevices first: devices of a pod that is no
    longer active are free again."""
    active = ActivePods("p")
    m, _ = manager(
        {"testdevice": FOUR_TWO_PER_NODE},
        allocated={"gone": {"c": {"testdevice": ["Dev1", "Dev3"]}}},
        active=active,
    )
    p = pod("p", [ctr("c", testdevice=2)])
    assert sorted_hints(m.get_topology_hints(p, p.containers[0])["testdevice"]) == ALL_PREF
    assert m.allocated_devices("testdevice") == frozenset()


# -- generateDeviceTopologyHints ---------------------------------------------------


def test_preference_is_judged_on_all_registered_devices() -> None:
    """Only Dev3/Dev4 (node 1) are free for a request of 2; {1} is preferred
    and {0,1} is not, because node 0 alone could hold 2 of all devices."""
    devs = {d.id: d for d in FOUR_TWO_PER_NODE}
    hints = generate_device_topology_hints((0, 1), devs, {"Dev3", "Dev4"}, (), 2)
    assert hints == [H(1), H(0, 1, p=False)]


def test_device_on_two_nodes_is_local_to_each() -> None:
    devs = {"a": D("a", 0, 1), "b": D("b", 1)}
    assert generate_device_topology_hints((0, 1), devs, {"a", "b"}, (), 2) == [H(1), H(0, 1, p=False)]
    assert generate_device_topology_hints((0, 1), devs, {"a"}, (), 1) == [H(0), H(1), H(0, 1, p=False)]


def test_reusable_devices_must_lie_inside_the_mask() -> None:
    """A mask missing one reusable device (with topology) is dropped;
    reusable devices without topology are skipped."""
    devs = {d.id: d for d in FOUR_TWO_PER_NODE} | {"X": D("X")}
    hints = generate_device_topology_hints((0, 1), devs, {"Dev2", "Dev4"}, {"Dev1", "X"}, 2)
    assert hints == [H(0), H(0, 1, p=False)]


def test_request_of_zero_fits_every_mask() -> None:
    devs = {d.id: d for d in FOUR_TWO_PER_NODE}
    assert generate_device_topology_hints((0, 1), devs, set(), (), 0) == [H(0), H(1), H(0, 1, p=False)]


def test_alignment_needs_one_node() -> None:
    assert not device_has_topology_alignment([D("a"), D("b")])
    assert device_has_topology_alignment([D("a"), D("b", 3)])


# -- TestGetPodDeviceRequest -------------------------------------------------------


def _limits(name: str, kind: str, index: int, **res: int) -> Container:
    return ctr_res(name, kind, index, res)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "p", "registered", "expected"),
    [
        ("empty pod", pod("p", []), [], {}),
        (
            "Init container requests device plugin resource",
            pod("p", [], init=[_limits("i0", "init", 0, cpu=2, memory=1, gpu=2)]),
            ["gpu"],
            {"gpu": 2},
        ),
        (
            "Init containers request device plugin resource",
            pod("p", [], init=[_limits("i0", "init", 0, cpu=2, gpu=2), _limits("i1", "init", 1, cpu=2, gpu=4)]),
            ["gpu"],
            {"gpu": 4},
        ),
        (
            "User container requests device plugin resource",
            pod("p", [_limits("a0", "app", 0, cpu=2, gpu=2)]),
            ["gpu"],
            {"gpu": 2},
        ),
        (
            "Init containers and user containers request the same amount of device plugin resources",
            pod(
                "p",
                [_limits("a0", "app", 0, gpu=1, nic=1), _limits("a1", "app", 1, gpu=1, nic=1)],
                init=[_limits("i0", "init", 0, gpu=2, nic=2), _limits("i1", "init", 1, gpu=2, nic=2)],
            ),
            ["gpu", "nic"],
            {"gpu": 2, "nic": 2},
        ),
        (
            "Init containers request more device plugin resources than user containers",
            pod(
                "p",
                [_limits("a0", "app", 0, gpu=1, nic=1), _limits("a1", "app", 1, gpu=1)],
                init=[_limits("i0", "init", 0, gpu=2, nic=1), _limits("i1", "init", 1, gpu=3, nic=2)],
            ),
            ["gpu", "nic"],
            {"gpu": 3, "nic": 2},
        ),
        (
            "User containers request more device plugin resources than init containers",
            pod(
                "p",
                [_limits("a0", "app", 0, gpu=3, nic=2), _limits("a1", "app", 1, gpu=3, nic=2)],
                init=[_limits("i0", "init", 0, gpu=2, nic=1), _limits("i1", "init", 1, gpu=2, nic=1)],
            ),
            ["gpu", "nic"],
            {"gpu": 6, "nic": 4},
        ),
        # podnuma: sidecars (KEP-753) as PodLimits counts them.
        (
            "sidecar before a regular init container",
            pod(
                "p",
                [_limits("a0", "app", 0, gpu=1)],
                init=[_limits("s0", "sidecar", 0, gpu=1), _limits("i1", "init", 1, gpu=2)],
            ),
            ["gpu"],
            {"gpu": 3},
        ),
        (
            "sidecar after a regular init container",
            pod(
                "p",
                [_limits("a0", "app", 0, gpu=1)],
                init=[_limits("i0", "init", 0, gpu=2), _limits("s1", "sidecar", 1, gpu=1)],
            ),
            ["gpu"],
            {"gpu": 2},
        ),
        (
            "unregistered resources are left out",
            pod("p", [_limits("a0", "app", 0, gpu=1, fpga=2)]),
            ["gpu"],
            {"gpu": 1},
        ),
    ],
)
def test_get_pod_device_request(
    name: str, p: Pod, registered: list[str], expected: dict[str, int]
) -> None:
    m, _ = manager({r: [] for r in registered})
    assert pod_device_request(p, m) == expected


# -- TestTopologyAlignedAllocation -------------------------------------------------


def _numbered(ranges: Sequence[tuple[int, int, int]]) -> list[Device]:
    return [D(f"Dev{i}", node) for lo, hi, node in ranges for i in range(lo, hi)]


@pytest.mark.parametrize(
    ("name", "request_", "devices", "hint", "alignment", "chosen"),
    [
        ("Single Request, no alignment", 1, [D("Dev1"), D("Dev2")], H(0, 1), {}, ["Dev1"]),
        ("Request for 1, partial alignment", 1, [D("Dev1"), D("Dev2", 1)], H(1), {1: 1}, ["Dev2"]),
        ("Single Request, socket 0", 1, [D("Dev1", 0), D("Dev2", 1)], H(0), {0: 1}, ["Dev1"]),
        ("Single Request, socket 1", 1, [D("Dev1", 0), D("Dev2", 1)], H(1), {1: 1}, ["Dev2"]),
        ("Request for 2, socket 0", 2, ALTERNATING, H(0), {0: 2}, ["Dev1", "Dev3"]),
        ("Request for 2, socket 1", 2, ALTERNATING, H(1), {1: 2}, ["Dev2", "Dev4"]),
        (
            "Request for 4, unsatisfiable, prefer socket 0", 4,
            [D("Dev1", 0), D("Dev2", 1), D("Dev3", 0), D("Dev4", 1), D("Dev5", 0), D("Dev6", 1)],
            H(0), {0: 3, 1: 1}, ["Dev1", "Dev3", "Dev5", "Dev2"],
        ),
        (
            "Request for 4, unsatisfiable, prefer socket 1", 4,
            [D("Dev1", 0), D("Dev2", 1), D("Dev3", 0), D("Dev4", 1), D("Dev5", 0), D("Dev6", 1)],
            H(1), {0: 1, 1: 3}, ["Dev2", "Dev4", "Dev6", "Dev1"],
        ),
        (
            "Request for 4, multisocket", 4,
            [D("Dev1", 0), D("Dev2", 1), D("Dev3", 2), D("Dev4", 3),
             D("Dev5", 0), D("Dev6", 1), D("Dev7", 2), D("Dev8", 3)],
            H(1, 3), {1: 2, 3: 2}, ["Dev2", "Dev6", "Dev4", "Dev8"],
        ),
        # The GetPreferredAllocation cases, without a plugin: the aligned
        # devices in registration order.
        (
            "Request for 5, socket 0, preferred aligned accepted", 5,
            _numbered([(0, 100, 0), (100, 200, 1)]), H(0), {0: 5},
            ["Dev0", "Dev1", "Dev2", "Dev3", "Dev4"],
        ),
        (
            "Request for 5, socket 1, preferred aligned accepted, bogus ignored", 5,
            _numbered([(0, 100, 1)]), H(1), {1: 5}, ["Dev0", "Dev1", "Dev2", "Dev3", "Dev4"],
        ),
        (
            "Request for 5, multisocket, preferred accepted", 5,
            _numbered([(0, 3, 0), (3, 100, 1)]), H(0), {0: 3, 1: 2},
            ["Dev0", "Dev1", "Dev2", "Dev3", "Dev4"],
        ),
        # podnuma's plugin (GetPreferredAllocation): with more aligned
        # devices than needed, the aligned ones in the node's device order.
        (
            "hint on two nodes, the plugin's order", 2,
            [D("A", 0), D("B", 0), D("C", 0), D("X", 1)], H(0, 1), {0: 2}, ["A", "B"],
        ),
        (
            "no hint affinity: registration order", 2,
            [D("B", 1), D("A", 0), D("C", 0)], None, {0: 1, 1: 1}, ["B", "A"],
        ),
        # the aligned devices first, then the plugin's preference over every
        # other available device: the node's device order
        (
            "aligned first, then the plugin's order", 3,
            [D("N1"), D("A", 0), D("N2"), D("B", 1)], H(0), {0: 1}, ["A", "N1", "N2"],
        ),
    ],
)
def test_topology_aligned_allocation(
    name: str,
    request_: int,
    devices: list[Device],
    hint: TopologyHint | None,
    alignment: dict[int, int],
    chosen: list[str],
) -> None:
    numa = sorted({n for d in devices for n in d.numa_nodes} | {0, 1})
    m, store = manager({"resource": devices}, numa=numa)
    if hint is not None:
        store.hint = hint
    p = pod("podUID", [ctr_res("containerName", "app", 0, {"resource": request_})])
    m.allocate(p, p.containers[0])
    got = m.devices_of("podUID", "containerName")["resource"]
    assert list(got) == chosen
    by_id = {d.id: d for d in devices}
    counts: dict[int, int] = {}
    if device_has_topology_alignment(devices):
        for dev in got:
            if by_id[dev].numa_nodes:
                node = by_id[dev].numa_nodes[0]
                counts[node] = counts.get(node, 0) + 1
    assert counts == alignment


# -- TestGetPreferredAllocationParameters, as reuse cases --------------------------

_EIGHT_ON_0 = _numbered([(0, 8, 0)])
_FOUR_FOUR = _numbered([(0, 4, 0), (4, 8, 1)])


@pytest.mark.parametrize(
    ("name", "request_", "devices", "other", "reusable", "chosen"),
    [
        ("Request for 1, socket 0, 0 already allocated, 0 reusable", 1,
         _numbered([(0, 4, 0)]), [], [], ["Dev0"]),
        ("Request for 4, socket 0, 2 already allocated, 2 reusable", 4,
         _EIGHT_ON_0, [], ["Dev0", "Dev5"], ["Dev0", "Dev5", "Dev1", "Dev2"]),
        ("Request for 4, socket 0, 4 already allocated, 2 reusable", 4,
         _EIGHT_ON_0, ["Dev4", "Dev1"], ["Dev0", "Dev5"], ["Dev0", "Dev5", "Dev2", "Dev3"]),
        ("Request for 6, multisocket, 2 already allocated, 2 reusable", 6,
         _FOUR_FOUR, [], ["Dev1", "Dev6"], ["Dev1", "Dev6", "Dev0", "Dev2", "Dev3", "Dev4"]),
        ("Request for 6, multisocket, 4 already allocated, 2 reusable", 6,
         _FOUR_FOUR, ["Dev0", "Dev7"], ["Dev1", "Dev6"], ["Dev1", "Dev6", "Dev2", "Dev3", "Dev4", "Dev5"]),
    ],
)
def test_reusable_devices_first(
    name: str, request_: int, devices: list[Device], other: list[str], reusable: list[str], chosen: list[str]
) -> None:
    """The init container's devices are taken first, then the aligned ones."""
    allocated: dict[str, dict[str, dict[str, list[str]]]] = {}
    if other:
        allocated["otherPod"] = {"c": {"resource": other}}
    if reusable:
        allocated["podUID"] = {"init": {"resource": reusable}}
    m, _ = manager({"resource": devices}, hint=H(0), allocated=allocated)
    init = ctr_res("init", "init", 0, {"resource": len(reusable)})
    app = ctr_res("containerName", "app", 0, {"resource": request_})
    p = pod("podUID", [app], init=[init])
    m.allocate(p, init)  # already held: nothing new, the devices become reusable
    m.allocate(p, app)
    assert list(m.devices_of("podUID", "containerName")["resource"]) == chosen

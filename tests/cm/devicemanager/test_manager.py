"""The device manager's allocation state: upstream
``pkg/kubelet/cm/devicemanager/manager_test.go`` (TestFilterByAffinity,
TestPodContainerDeviceAllocation, TestPodContainerDeviceToAllocate,
TestInitContainerDeviceAllocation,
TestRestartableInitContainerDeviceAllocation, TestUpdatePluginResources,
TestDevicePreStartContainer's zero request) plus re-admission, stale-state
and topology-manager cases of podnuma's own."""

from __future__ import annotations

import pytest

from podnuma.cm.admission import AdmitResult
from podnuma.cm.devicemanager.manager import DeviceManager, DeviceManagerError
from podnuma.cm.topologymanager.manager import SCOPE_CONTAINER, SCOPE_POD, TopologyManager
from podnuma.cm.topologymanager.new_manager import new_topology_policy
from podnuma.machine.topology import Device
from tests.cm.devicemanager.helpers import (
    ActivePods,
    D,
    H,
    ctr,
    ctr_res,
    machine,
    manager,
    pod,
)
from tests.cm.topologymanager.helpers import Gates

RES1 = "domain1.com/resource1"
RES2 = "domain2.com/resource2"
RES3 = "domain2.com/resource3"


# -- TestFilterByAffinity ------------------------------------------------------------


@pytest.mark.parametrize(
    ("available", "aligned", "unaligned", "without"),
    [
        (["dev1", "dev2"], ["dev2"], ["dev1"], []),
        (["dev1", "dev2", "dev3", "dev4"], ["dev2", "dev3", "dev4"], ["dev1"], []),
        # podnuma: devices without topology form the third group.
        (["dev5", "dev1", "dev3"], ["dev3"], ["dev1"], ["dev5"]),
    ],
)
def test_filter_by_affinity(
    available: list[str], aligned: list[str], unaligned: list[str], without: list[str]
) -> None:
    devices = [D("dev1", 1), D("dev2", 1, 2), D("dev3", 2), D("dev4", 2), D("dev5")]
    m, _ = manager({"res1": devices}, hint=H(2), numa=(0, 1, 2))
    got = m._filter_by_affinity("", "", "res1", available)
    assert got == (aligned, unaligned, without)


def test_filter_by_affinity_without_hint_affinity() -> None:
    m, _ = manager({"res1": [D("a", 0), D("b", 1)]})
    assert m._filter_by_affinity("p", "c", "res1", ["b", "a"]) == ([], [], ["b", "a"])


def test_filter_by_affinity_orders_nodes_by_free_devices() -> None:
    """Hint nodes first, each group by ascending number of free devices."""
    devices = [D("a0", 0), D("b0", 0), D("a1", 1), D("a2", 2), D("b2", 2), D("c2", 2), D("a3", 3)]
    m, _ = manager({"r": devices}, hint=H(0, 1), numa=(0, 1, 2, 3))
    avail = [d.id for d in devices]
    assert m._filter_by_affinity("p", "c", "r", avail) == (
        ["a1", "a0", "b0"], ["a3", "a2", "b2", "c2"], []
    )


# -- TestPodContainerDeviceAllocation ---------------------------------------------


def test_pod_container_device_allocation() -> None:
    active = ActivePods()
    m, _ = manager(
        {RES1: [D("dev1", 0), D("dev2", 0)], RES2: [D("dev3"), D("dev4")]}, active=active
    )
    pods = [
        pod("pod0", [ctr_res("c", "app", 0, {RES1: 2, "cpu": 2, RES2: 1})]),
        pod("pod1", [ctr_res("c", "app", 0, {RES1: 1})]),
        pod("pod2", [ctr_res("c", "app", 0, {RES2: 1})]),
    ]
    expected = [
        (None, 2, 1),
        ("requested number of devices unavailable for domain1.com/resource1. Requested: 1, Available: 0", 2, 1),
        (None, 2, 2),
    ]
    for p, (err, n1, n2) in zip(pods, expected, strict=True):
        active.add(p)
        if err is None:
            m.allocate(p, p.containers[0])
        else:
            with pytest.raises(DeviceManagerError) as exc:
                m.allocate(p, p.containers[0])
            assert str(exc.value) == err
            assert m.devices_of(p.uid, "c") == {}
        assert len(m.allocated_devices(RES1)) == n1
        assert len(m.allocated_devices(RES2)) == n2
    assert m.devices_of("pod0", "c") == {RES1: ("dev1", "dev2"), RES2: ("dev3",)}
    assert m.devices_of("pod2", "c") == {RES2: ("dev4",)}


# -- TestPodContainerDeviceToAllocate ----------------------------------------------


@pytest.mark.parametrize(
    ("uid", "resource", "required", "message"),
    [
        ("pod1", RES1, 2, "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1"),
        ("pod2", RES2, 1, "cannot allocate unregistered device domain2.com/resource2"),
        ("pod3", RES3, 1,
         "previously allocated devices are no longer healthy; cannot allocate unhealthy devices domain2.com/resource3"),
    ],
)
def test_devices_to_allocate_errors(uid: str, resource: str, required: int, message: str) -> None:
    # resource1 has no healthy device, resource2 is not registered, the
    # device held for resource3 (dev5) is no longer among its healthy ones.
    m, _ = manager(
        {RES1: [], RES3: [D("dev7"), D("dev8")]},
        allocated={
            "pod1": {"con1": {RES1: ["dev1", "dev2"]}},
            "pod2": {"con2": {RES2: ["dev5"]}},
            "pod3": {"con3": {RES3: ["dev5"]}},
        },
    )
    con = {"pod1": "con1", "pod2": "con2", "pod3": "con3"}[uid]
    p = pod(uid, [ctr_res(con, "app", 0, {resource: required})])
    with pytest.raises(DeviceManagerError) as exc:
        m.allocate(p, p.containers[0])
    assert str(exc.value) == message


def test_registered_resource_without_devices_fails_allocation() -> None:
    """The device manager knows the resource but has no healthy device: the
    hint is nil and Allocate fails (before the fit check could say OutOf)."""
    m, _ = manager({RES1: []})
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 1})])
    assert m.get_topology_hints(p, p.containers[0]) == {RES1: None}
    with pytest.raises(DeviceManagerError, match="^no healthy devices present"):
        m.allocate(p, p.containers[0])


# -- TestInitContainerDeviceAllocation ---------------------------------------------


def test_init_container_device_allocation() -> None:
    m, _ = manager({RES1: [D("dev1"), D("dev2")], RES2: [D("dev3", 0), D("dev4", 0)]})
    inits = [ctr_res("init1", "init", 0, {RES1: 1}), ctr_res("init2", "init", 1, {RES1: 2})]
    apps = [ctr_res("app1", "app", 0, {RES1: 1, RES2: 1}), ctr_res("app2", "app", 1, {RES1: 1, RES2: 1})]
    p = pod("p", apps, init=inits)
    for c in (*inits, *apps):
        m.allocate(p, c)
    dev = {c.name: set(m.devices_of("p", c.name)[RES1]) for c in (*inits, *apps)}
    assert [len(dev[n]) for n in ("init1", "init2", "app1", "app2")] == [1, 2, 1, 1]
    assert dev["init2"] >= dev["init1"] | dev["app1"] | dev["app2"]
    assert not dev["app1"] & dev["app2"]
    # podnuma's deterministic choice
    assert m.devices_of("p", "app1") == {RES1: ("dev1",), RES2: ("dev3",)}
    assert m.devices_of("p", "app2") == {RES1: ("dev2",), RES2: ("dev4",)}


# -- TestRestartableInitContainerDeviceAllocation ----------------------------------


def test_restartable_init_container_device_allocation() -> None:
    m, _ = manager({RES1: [D(f"dev{i}") for i in range(1, 7)]})
    inits = [
        ctr_res("init1", "init", 0, {RES1: 3}),
        ctr_res("side2", "sidecar", 1, {RES1: 1}),
        ctr_res("side3", "sidecar", 2, {RES1: 2}),
    ]
    apps = [ctr_res("app1", "app", 0, {RES1: 1}), ctr_res("app2", "app", 1, {RES1: 2})]
    p = pod("p", apps, init=inits)
    for c in (*inits, *apps):
        m.allocate(p, c)
    got = {c.name: m.devices_of("p", c.name)[RES1] for c in (*inits, *apps)}
    assert got == {
        "init1": ("dev1", "dev2", "dev3"),
        "side2": ("dev1",),
        "side3": ("dev2", "dev3"),
        "app1": ("dev4",),
        "app2": ("dev5", "dev6"),
    }
    dedicated = [set(got[n]) for n in ("side2", "side3", "app1", "app2")]
    for i, a in enumerate(dedicated):
        for b in dedicated[i + 1:]:
            assert not a & b


def test_container_hints_count_reusable_devices() -> None:
    """After a regular init container took both node-0 devices, the app
    container's hints must include node 0 (where its reusable devices are)."""
    m, _ = manager({RES1: [D("a", 0), D("b", 0), D("c", 1), D("d", 1)]}, hint=H(0))
    init = ctr_res("init", "init", 0, {RES1: 2})
    app = ctr_res("app", "app", 0, {RES1: 2})
    p = pod("p", [app], init=[init])
    m.allocate(p, init)
    assert m.devices_of("p", "init") == {RES1: ("a", "b")}
    assert m.get_topology_hints(p, app) == {RES1: [H(0), H(0, 1, p=False)]}
    # The pod-level view sees the pod's held devices (a, b): it regenerates
    # hints from them, since their count equals the pod's request.
    assert m.get_pod_topology_hints(p) == {RES1: [H(0), H(0, 1, p=False)]}


# -- re-admission ------------------------------------------------------------------------


def test_readmission_returns_held_devices() -> None:
    m, _ = manager({RES1: [D("a", 0), D("b", 1)]}, hint=H(1))
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 1})])
    m.allocate(p, p.containers[0])
    m.allocate(p, p.containers[0])
    assert m.devices_of("p", "c") == {RES1: ("b",)}
    assert m.allocated_devices(RES1) == {"b"}
    assert m.get_topology_hints(p, p.containers[0]) == {RES1: [H(1), H(0, 1, p=False)]}


def test_changed_request_is_an_error() -> None:
    m, _ = manager({RES1: [D("a", 0), D("b", 1)]}, allocated={"p": {"c": {RES1: ["a"]}}})
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 2})])
    assert m.get_topology_hints(p, p.containers[0]) == {RES1: []}
    with pytest.raises(DeviceManagerError) as exc:
        m.allocate(p, p.containers[0])
    assert str(exc.value) == (
        'pod "p" container "c" changed request for resource "domain1.com/resource1" from 1 to 2'
    )


# -- TestDevicePreStartContainer (zero request) / unknown resources --------------------


def test_zero_request_and_unknown_resource_allocate_nothing() -> None:
    m, _ = manager({RES1: [D("dev1"), D("dev2")]})
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 0, "example.com/unknown": 3})])
    m.allocate(p, p.containers[0])
    assert m.devices_of("p", "c") == {}
    assert not m.has_pod("p")


def test_partial_allocation_stays_on_failure() -> None:
    """A container asking for two resources keeps the first one's devices
    when the second fails (resources go by name here)."""
    m, _ = manager({RES1: [D("a")], RES2: [D("x")]})
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 1, RES2: 2})])
    with pytest.raises(DeviceManagerError, match="Requested: 2, Available: 1$"):
        m.allocate(p, p.containers[0])
    assert m.devices_of("p", "c") == {RES1: ("a",)}


# -- UpdateAllocatedDevices ----------------------------------------------------------


def test_stale_pods_free_their_devices() -> None:
    active = ActivePods()
    m, _ = manager({RES1: [D("a", 0), D("b", 0)]}, active=active)
    first = pod("first", [ctr_res("c", "app", 0, {RES1: 2})])
    active.add(first)
    m.allocate(first, first.containers[0])
    second = pod("second", [ctr_res("c", "app", 0, {RES1: 2})])
    active.uids = ["second"]
    m.allocate(second, second.containers[0])
    assert m.devices_of("second", "c") == {RES1: ("a", "b")}
    assert m.devices_of("first", "c") == {}


def test_no_collection_without_active_pods_and_remove_container_keeps_devices() -> None:
    m, _ = manager({RES1: [D("a", 0)]}, allocated={"old": {"c": {RES1: ["a"]}}})
    m.remove_container("old", "c")
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 1})])
    assert m.get_topology_hints(p, p.containers[0]) == {RES1: []}
    with pytest.raises(DeviceManagerError, match="Requested: 1, Available: 0"):
        m.allocate(p, p.containers[0])
    m.remove_pod("old")
    m.allocate(p, p.containers[0])
    assert m.devices_of("p", "c") == {RES1: ("a",)}


# -- TestUpdatePluginResources / GetCapacity --------------------------------------------


def test_update_plugin_resources() -> None:
    m, _ = manager(
        {RES2: [D("dev2")]},
        allocated={"testPod": {"c": {RES1: ["dev1"], RES2: ["dev2"]}}},
    )
    # allocatable has no resource1 and two of resource2
    assert m.sanitize_node_allocatable({RES2: 2}) == {RES1: 1, RES2: 2}
    assert m.update_plugin_resources("testPod", {RES2: 2}) == {RES1: 1, RES2: 2}
    assert m.update_plugin_resources("otherPod", {RES2: 0}) == {RES2: 0}


def test_allocatable_counts() -> None:
    m, _ = manager({RES1: [D("a"), D("b", 0)], RES2: []})
    assert m.allocatable_counts() == {RES1: 2, RES2: 0}


# -- with the topology manager -------------------------------------------------------


def _tm(
    policy: str, scope: str, devices: dict[str, list[Device]]
) -> tuple[TopologyManager, DeviceManager]:
    mach = machine(devices)
    pol, _, _ = new_topology_policy(policy, mach, None, Gates())
    tm = TopologyManager(None if policy == "none" else pol, scope)
    dm = DeviceManager(mach, tm)
    tm.add_hint_provider(dm)
    return tm, dm


def test_topology_manager_rejects_and_reports() -> None:
    tm, dm = _tm("single-numa-node", SCOPE_CONTAINER, {RES1: [D("a", 0), D("b", 1)]})
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 2})])
    res = tm.admit(p)
    assert res == AdmitResult(False, "TopologyAffinityError",
                              "Resources cannot be allocated with Topology locality")
    tm, dm = _tm("best-effort", SCOPE_CONTAINER, {RES1: [D("a", 0)]})
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 2})])
    assert tm.admit(p) == AdmitResult(
        False,
        "UnexpectedAdmissionError",
        "Allocate failed due to requested number of devices unavailable for "
        "domain1.com/resource1. Requested: 2, Available: 1, which is unexpected",
    )


@pytest.mark.parametrize("scope", [SCOPE_CONTAINER, SCOPE_POD])
def test_topology_manager_aligns(scope: str) -> None:
    tm, dm = _tm("restricted", scope, {RES1: [D("a", 0), D("b", 1), D("c", 1)]})
    p = pod("p", [ctr_res("c", "app", 0, {RES1: 2})])
    assert tm.admit(p).admit
    assert dm.devices_of("p", "c") == {RES1: ("b", "c")}
    assert tm.get_affinity("p", "c") == H(1)


def test_policy_none_takes_registration_order() -> None:
    tm, dm = _tm("none", SCOPE_CONTAINER, {RES1: [D("a", 0), D("b", 1), D("c", 1)]})
    # Policy none stores no hint (nil affinity): every device is "without
    # affinity" and goes in registration order.
    assert tm.get_affinity("p", "c").numa_node_affinity is None
    p = pod("p", [ctr("x", notused=0), ctr_res("c", "app", 1, {RES1: 2})])
    assert tm.admit(p).admit
    assert dm.devices_of("p", "c") == {RES1: ("a", "b")}

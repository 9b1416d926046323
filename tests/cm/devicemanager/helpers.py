"""Shared notation for the device-manager tests.

``D("Dev1", 0)`` is a device on NUMA node 0, ``D("Dev1")`` one without
topology; ``H(0, 1)`` a preferred hint on NUMA {0,1}, ``H(0, p=False)`` a
non-preferred one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from podnuma.api.pod import Container, ContainerKind, Pod
from podnuma.api.quantity import Quantity
from podnuma.cm.devicemanager.manager import ActiveContainers, DeviceManager
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.machine.topology import CPUInfo, CPUTopology, Device, Machine, NUMANode

# pod UID -> container -> resource -> device ids already held
Allocated = Mapping[str, Mapping[str, Mapping[str, Sequence[str]]]]


def D(dev_id: str, *numa: int) -> Device:  # noqa: N802 - table notation
    return Device(dev_id, tuple(numa))


def H(*bits: int, p: bool = True) -> TopologyHint:  # noqa: N802 - table notation
    return TopologyHint(BitMask(bits), p)


def machine(devices: Mapping[str, Sequence[Device]], numa: Sequence[int] = (0, 1)) -> Machine:
    """One CPU per NUMA node; only the NUMA ids and the devices matter."""
    info = {i: CPUInfo(numa_node=n, socket=n, core=i, uncore_cache=n) for i, n in enumerate(numa)}
    return Machine(
        topology=CPUTopology(info),
        numa_nodes=tuple(NUMANode(n, 1 << 30) for n in numa),
        devices={r: tuple(d) for r, d in devices.items()},
    )


def ctr(name: str, *, kind: ContainerKind = "app", index: int = 0, **limits: int) -> Container:
    """A container whose limits (= requests) are ``limits`` (resource names
    that are not identifiers go through :func:`ctr_res`)."""
    return ctr_res(name, kind, index, limits)


def ctr_res(name: str, kind: ContainerKind, index: int, limits: Mapping[str, int]) -> Container:
    res = {k: Quantity.from_int(v) for k, v in limits.items()}
    return Container(
        name=name,
        kind=kind,
        requests=res,
        limits=res,
        restart_policy="Always" if kind == "sidecar" else None,
        index=index,
    )


def pod(uid: str, containers: Sequence[Container], init: Sequence[Container] = ()) -> Pod:
    return Pod(uid=uid, name=uid, init_containers=tuple(init), containers=tuple(containers))


class FakeStore:
    """``mockAffinityStore``: the same hint for every container, unless a
    per-container hint is set."""

    def __init__(self, hint: TopologyHint = EMPTY_HINT) -> None:
        self.hint = hint
        self.per_container: dict[tuple[str, str], TopologyHint] = {}

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.per_container.get((pod_uid, container_name), self.hint)


class ActivePods:
    """``activePodsStub``: the pods the manager sees as active."""

    def __init__(self, *pods: Pod | str) -> None:
        self.uids: list[str] = [p if isinstance(p, str) else p.uid for p in pods]

    def add(self, p: Pod | str) -> None:
        self.uids.append(p if isinstance(p, str) else p.uid)

    def __call__(self) -> ActiveContainers:
        return {u: frozenset() for u in self.uids}


def manager(
    devices: Mapping[str, Sequence[Device]],
    *,
    hint: TopologyHint = EMPTY_HINT,
    allocated: Allocated | None = None,
    active: ActivePods | None = None,
    numa: Sequence[int] = (0, 1),
) -> tuple[DeviceManager, FakeStore]:
    store = FakeStore(hint)
    m = DeviceManager(machine(devices, numa), store, active_pods=active)
    for uid, containers in (allocated or {}).items():
        for name, resources in containers.items():
            for resource, ids in resources.items():
                m.insert_allocation(uid, name, resource, ids)
    return m, store


def hint_key(h: TopologyHint) -> tuple[bool, int, int]:
    """``LessThan`` order: preferred first, then narrower, then lower mask."""
    assert h.numa_node_affinity is not None
    return (not h.preferred, h.numa_node_affinity.count(), h.numa_node_affinity.value)


def sorted_hints(hints: Sequence[TopologyHint] | None) -> list[TopologyHint] | None:
    return None if hints is None else sorted(hints, key=hint_key)

"""Compact builders for the memory manager tests (upstream's test fixtures
written as data: machine states, blocks, pods)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import Quantity, parse_quantity
from podnuma.cm.memorymanager.state import Block, MemoryTable, NUMANodeState
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.machine.topology import NUMANode

MB = 1 << 20
GB = 1 << 30
HP1G = "hugepages-1Gi"
HP2M = "hugepages-2Mi"
MEM = "memory"

GATES = FeatureGates.defaults()


def mt(allocatable: int, free: int, reserved: int, system_reserved: int, total: int) -> MemoryTable:
    """A memory table in upstream's test field order (Allocatable, Free,
    Reserved, SystemReserved, TotalMemSize)."""
    return MemoryTable(total, system_reserved, allocatable, reserved, free)


def ns(
    memory: MemoryTable | None = None,
    hp1g: MemoryTable | None = None,
    *,
    cells: Sequence[int] = (),
    n: int = 0,
    hp2m: MemoryTable | None = None,
) -> NUMANodeState:
    tables: dict[str, MemoryTable] = {}
    if memory is not None:
        tables[MEM] = memory
    if hp1g is not None:
        tables[HP1G] = hp1g
    if hp2m is not None:
        tables[HP2M] = hp2m
    return NUMANodeState(n, tables, list(cells))


def blk(numa: Sequence[int], type_: str, size: int) -> Block:
    return Block(numa, type_, size)


def mem_hp(numa: Sequence[int], mem: int, hp: int | None = None, hp_type: str = HP1G) -> list[Block]:
    """A container's memory block and (optionally) its hugepages block."""
    out = [blk(numa, MEM, mem)]
    if hp is not None:
        out.append(blk(numa, hp_type, hp))
    return out


def numa(nid: int, memory: int, hp1g_pages: int = 0) -> NUMANode:
    return NUMANode(nid, memory, {GB: hp1g_pages * GB} if hp1g_pages else {})


def res(**values: str) -> dict[str, Quantity]:
    """Resources with keys cpu/memory/hp1g/hp2m."""
    names = {"cpu": "cpu", "memory": MEM, "hp1g": HP1G, "hp2m": HP2M}
    return {names[k]: parse_quantity(v) for k, v in values.items()}


def container(
    name: str,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity] | None = None,
    *,
    kind: str = "app",
) -> Container:
    return Container(
        name,
        kind,  # type: ignore[arg-type]
        requests,
        requests if limits is None else limits,
        restart_policy="Always" if kind == "sidecar" else None,
    )


GUARANTEED = res(cpu="1000Mi", memory="1Gi", hp1g="1Gi")
BURSTABLE_REQ = res(cpu="1000Mi", memory="1Gi", hp1g="1Gi")
BURSTABLE_LIM = res(cpu="1000Mi", memory="2Gi", hp1g="2Gi")


def g(mem: str, hp: str | None = None) -> dict[str, Quantity]:
    """Guaranteed requirements: 1000Mi CPU, memory and 1Gi hugepages."""
    return res(cpu="1000Mi", memory=mem, hp1g=hp or mem)


def get_pod(uid: str, name: str, requests: Mapping[str, Quantity], limits: Mapping[str, Quantity] | None = None) -> Pod:
    """upstream getPod: one app container."""
    return Pod(uid=uid, name=uid or "pod", containers=(container(name, requests, limits),))


def pod_with_inits(uid: str, apps: Sequence[Container], inits: Sequence[Container]) -> Pod:
    """upstream getPodWithInitContainers."""
    return Pod(uid=uid, name=uid or "pod", init_containers=tuple(inits), containers=tuple(apps))


def mask(*bits: int) -> BitMask:
    return BitMask(bits)


def hint(bits: Sequence[int] | None, preferred: bool) -> TopologyHint:
    return TopologyHint(None if bits is None else BitMask(bits), preferred)


class FakeAffinity:
    """topologymanager.NewFakeManagerWithHint: the same hint for every container."""

    def __init__(self, h: TopologyHint | None = None) -> None:
        self.hint = EMPTY_HINT if h is None else h

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hint


def sorted_blocks(assignments: Mapping[str, Mapping[str, Sequence[Block]]]) -> dict[str, dict[str, list[Block]]]:
    """Assignments with each block list sorted (upstream compares blocks as multisets)."""
    return {
        pod: {name: sorted(blocks, key=lambda b: (b.type, b.numa_affinity, b.size)) for name, blocks in ctrs.items()}
        for pod, ctrs in assignments.items()
    }

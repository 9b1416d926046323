"""The ``synthetic`` node form: a regular machine described by a few numbers.

``{sockets, numaNodesPerSocket, coresPerNumaNode, threadsPerCore,
coresPerUncoreCache?, memoryPerNumaNode?, hugepagesPerNumaNode?, distances?}``

The machine is described as cadvisor would report such hardware (a
``MachineInfo``) and then goes through the kubelet's ``Discover``
(``machineinfo.discover``), exactly like the other forms:

- Cores are numbered in order across sockets then NUMA nodes (NUMA node id
  = ``socket * numaNodesPerSocket + n``); logical CPUs are numbered as Linux
  does on x86: the first thread of every core (CPU id = core index), then
  every core's second thread (CPU id = core index + number of cores), etc.
  So 2 sockets x 1 NUMA x 4 cores x 2 threads gives siblings (c, c+8).
- ``coresPerUncoreCache`` groups consecutive cores under one L3 (ids 0, 1, …
  machine-wide). Without it there is no uncore cache and the kubelet uses
  the socket id. cadvisor's rule applies: an L3 shared by exactly all CPUs of
  a NUMA node is a node cache, not an uncore cache, so
  ``coresPerUncoreCache == coresPerNumaNode`` also ends with the socket id
  as uncore id (as on such real hardware).
- ``memoryPerNumaNode`` defaults to 64Gi (hugepage pools included, like
  MemTotal). ``hugepagesPerNumaNode: {hugepages-2Mi: 1Gi}`` gives each node
  a pool of that total size.
- ``distances``: a full matrix (list of rows, or ``{NUMA_ID: row}``).
  Default: 10 to itself (the ACPI SLIT local distance), 12 to another NUMA
  node of the same socket, 21 to a node of another socket — the common
  values of sub-NUMA-clustered SLITs and two-socket servers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.errors import InputError
from podnuma.fieldkit import expect_list, expect_mapping
from podnuma.inputs.discover._fields import (
    MAX_CPUS,
    MAX_NUMA_NODES,
    check_keys,
    expect_int,
    int_key,
    join,
    parse_bytes,
)
from podnuma.inputs.discover.machineinfo import (
    Cache,
    Core,
    HugePagesInfo,
    MachineInfo,
    MachineInfoNode,
    build_machine,
    machine_hugepages,
)
from podnuma.machine.topology import Machine

__all__ = [
    "DEFAULT_MEMORY_PER_NUMA_NODE",
    "LOCAL_DISTANCE",
    "SAME_SOCKET_DISTANCE",
    "REMOTE_DISTANCE",
    "parse_synthetic",
    "load_synthetic",
    "parse_hugepage_pools",
    "parse_distances",
]

DEFAULT_MEMORY_PER_NUMA_NODE = 64 * 1024**3
LOCAL_DISTANCE = 10
SAME_SOCKET_DISTANCE = 12
REMOTE_DISTANCE = 21
L3_SIZE = 32 * 1024 * 1024  # nominal; nothing reads it

_KEYS = (
    "sockets",
    "numaNodesPerSocket",
    "coresPerNumaNode",
    "threadsPerCore",
    "coresPerUncoreCache",
    "memoryPerNumaNode",
    "hugepagesPerNumaNode",
    "distances",
)
_HUGEPAGES_PREFIX = "hugepages-"


def parse_hugepage_pools(value: object, path: str) -> dict[int, int]:
    """``{hugepages-SIZE: TOTAL}`` -> ``{page size bytes: total bytes}``."""
    doc = expect_mapping(value, path)
    pools: dict[int, int] = {}
    for key, qty in doc.items():
        kpath = join(path, str(key))
        if not isinstance(key, str) or not key.startswith(_HUGEPAGES_PREFIX):
            raise InputError(f"expected a key like hugepages-2Mi, got {key!r}", path=kpath)
        size = parse_bytes(key[len(_HUGEPAGES_PREFIX):], kpath)
        if size <= 0 or size % 1024:
            raise InputError(f"invalid huge page size {key!r}", path=kpath)
        total = parse_bytes(qty, kpath)
        if total % size:
            raise InputError(
                f"{qty!r} is not a whole number of {key[len(_HUGEPAGES_PREFIX):]} pages", path=kpath
            )
        if size in pools:
            raise InputError(f"huge page size of {key!r} listed twice", path=kpath)
        pools[size] = total
    return pools


def parse_distances(
    value: object, path: str, node_ids: list[int], *, as_read: bool = False
) -> dict[int, tuple[int, ...]]:
    """A distance matrix: a list of rows (row i = i-th NUMA id) or ``{NUMA_ID: row}``.

    Every node needs a row. By default (the ``synthetic`` shorthand) a row has
    one positive entry per node. ``as_read`` (the ``cpus`` table form, which
    ``node discover`` writes) takes a row as cadvisor hands a node's
    ``distance`` file to the kubelet: one or more non-negative numbers, of
    any length (the kubelet indexes row i by NUMA id j only when it compares
    masks holding both; a row too short for that fails there, as in Go).
    """
    rows: dict[int, tuple[Any, str]] = {}
    if isinstance(value, Mapping):
        for key, row in value.items():
            kpath = join(path, str(key))
            nid = int_key(key, kpath)
            if nid not in node_ids:
                raise InputError(f"NUMA node {nid} does not exist", path=kpath)
            if nid in rows:
                raise InputError(f"NUMA node {nid} listed twice", path=kpath)
            rows[nid] = (row, kpath)
    else:
        seq = expect_list(value, path)
        if len(seq) != len(node_ids):
            raise InputError(
                f"needs one row per NUMA node ({len(node_ids)}), got {len(seq)}", path=path
            )
        for i, row in enumerate(seq):
            rows[node_ids[i]] = (row, join(path, i))
    out: dict[int, tuple[int, ...]] = {}
    for nid in node_ids:
        if nid not in rows:
            raise InputError(f"missing the row of NUMA node {nid}", path=path)
        row, rpath = rows[nid]
        items = expect_list(row, rpath)
        if as_read and not items:
            raise InputError("needs at least one distance (a node's distance file as read)", path=rpath)
        if not as_read and len(items) != len(node_ids):
            raise InputError(
                f"needs one distance per NUMA node ({len(node_ids)}), got {len(items)}", path=rpath
            )
        out[nid] = tuple(expect_int(d, join(rpath, j), minimum=0 if as_read else 1) for j, d in enumerate(items))
    return out


def parse_synthetic(doc: object, path: str = "") -> MachineInfo:
    """The machine as cadvisor's MachineInfo. Error paths are ``path``-relative."""
    spec = expect_mapping(doc, path)
    check_keys(spec, _KEYS, path)
    for key in _KEYS[:4]:
        if key not in spec:
            raise InputError("required field is missing", path=join(path, key))
    sockets = expect_int(spec["sockets"], join(path, "sockets"), minimum=1)
    numa_per_socket = expect_int(
        spec["numaNodesPerSocket"], join(path, "numaNodesPerSocket"), minimum=1
    )
    cores_per_numa = expect_int(spec["coresPerNumaNode"], join(path, "coresPerNumaNode"), minimum=1)
    threads = expect_int(spec["threadsPerCore"], join(path, "threadsPerCore"), minimum=1)
    cores_per_socket = numa_per_socket * cores_per_numa
    total_cores = sockets * cores_per_socket
    if total_cores * threads > MAX_CPUS:
        raise InputError(
            f"{sockets} x {numa_per_socket} x {cores_per_numa} x {threads} = "
            f"{total_cores * threads} logical CPUs: more than Linux supports ({MAX_CPUS})",
            path=path,
        )
    if sockets * numa_per_socket > MAX_NUMA_NODES:
        raise InputError(
            f"{sockets * numa_per_socket} NUMA nodes: more than Linux supports ({MAX_NUMA_NODES})",
            path=join(path, "numaNodesPerSocket"),
        )

    per_uncore: int | None = None
    if spec.get("coresPerUncoreCache") is not None:
        upath = join(path, "coresPerUncoreCache")
        per_uncore = expect_int(spec["coresPerUncoreCache"], upath, minimum=1)
        if cores_per_socket % per_uncore or (
            cores_per_numa % per_uncore and per_uncore % cores_per_numa
        ):
            raise InputError(
                f"{per_uncore} cores per uncore cache do not tile the sockets "
                f"({cores_per_numa} cores per NUMA node, {cores_per_socket} per socket)",
                path=upath,
            )

    memory = DEFAULT_MEMORY_PER_NUMA_NODE
    if spec.get("memoryPerNumaNode") is not None:
        memory = parse_bytes(spec["memoryPerNumaNode"], join(path, "memoryPerNumaNode"))
    pools: dict[int, int] = {}
    if spec.get("hugepagesPerNumaNode") is not None:
        hpath = join(path, "hugepagesPerNumaNode")
        # (pools larger than memoryPerNumaNode taken as the other forms take them)
        pools = parse_hugepage_pools(spec["hugepagesPerNumaNode"], hpath)

    node_ids = list(range(sockets * numa_per_socket))
    if spec.get("distances") is not None:
        distances = parse_distances(spec["distances"], join(path, "distances"), node_ids)
    else:
        distances = {
            a: tuple(
                LOCAL_DISTANCE
                if a == b
                else SAME_SOCKET_DISTANCE
                if a // numa_per_socket == b // numa_per_socket
                else REMOTE_DISTANCE
                for b in node_ids
            )
            for a in node_ids
        }

    hugepages = tuple(
        HugePagesInfo(page_size=size // 1024, num_pages=total // size)
        for size, total in sorted(pools.items())
    )
    # cadvisor: an L3 covering exactly the node's threads is a node cache, not an uncore cache.
    uncore_is_node_cache = per_uncore is not None and per_uncore == cores_per_numa
    nodes = []
    for nid in node_ids:
        socket = nid // numa_per_socket
        cores = []
        for c in range(cores_per_numa):
            g = nid * cores_per_numa + c
            uncore: tuple[Cache, ...] = ()
            if per_uncore is not None and not uncore_is_node_cache:
                uncore = (Cache(id=g // per_uncore, size=L3_SIZE, type="Unified", level=3),)
            cores.append(
                Core(
                    id=g - socket * cores_per_socket,
                    threads=tuple(g + t * total_cores for t in range(threads)),
                    socket_id=socket,
                    uncore_caches=uncore,
                )
            )
        node_caches: tuple[Cache, ...] = ()
        if uncore_is_node_cache:
            node_caches = (Cache(id=nid, size=L3_SIZE, type="Unified", level=3),)
        nodes.append(
            MachineInfoNode(
                id=nid,
                memory=memory,
                hugepages=hugepages,
                cores=tuple(cores),
                caches=node_caches,
                distances=distances[nid],
            )
        )
    return MachineInfo(
        num_cores=total_cores * threads,
        num_sockets=sockets,
        topology=tuple(nodes),
        num_physical_cores=total_cores,
        memory_capacity=memory * len(node_ids),
        hugepages=machine_hugepages(nodes),
    )


def load_synthetic(doc: object, *, path: str = "synthetic", name: str = "node") -> Machine:
    """The ``synthetic`` form as a ``Machine``."""
    return build_machine(parse_synthetic(doc, path), name=name)

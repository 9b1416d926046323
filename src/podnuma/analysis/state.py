"""What a kubelet state directory says, and where it contradicts itself.

From the decoded ``cpu_manager_state`` and ``memory_manager_state``
(:mod:`podnuma.inputs.state`): per pod and container the CPUs, the NUMA
nodes (of the memory blocks; of the CPUs too when the machine is known)
and the memory blocks, names joined from a pods dump, and the
inconsistencies the kubelet's own bookkeeping rules out:

- ``cpu-overlap``: a CPU in the exclusive sets of two different pods (the
  containers of one pod may share: init containers' CPUs are reused, and a
  pod's shared pool is common to its containers);
- ``cpu-in-default-set``: a CPU both assigned and in the default set;
- ``cpu-outside-pod-budget``: a container of a pod with a pod-level CPU set
  holding CPUs outside it;
- ``memory-table``: a NUMA node's table not adding up (``allocatable =
  reserved + free``; ``total = systemReserved + allocatable`` plus, for
  ``memory``, the node's hugepage pools);
- ``memory-reserved``: per memory type, the nodes' ``reserved`` not equal to
  the blocks held (a pod's pod-level blocks, else its containers' blocks);
- ``memory-unknown-node``: a block on a NUMA node the machine state lacks;
- ``device-overlap``: a device held by two different pods (device
  checkpoint);
- ``device-checkpoint-unreadable``: a device checkpoint the kubelet cannot
  read (it then starts with no device state: every device looks free);
- ``device-entry-skipped``: an entry the kubelet skips (its allocation
  response does not decode);
- ``pod-not-in-dump``: an entry of a pod the dump does not list.

The devices of each container come from the device manager's
``device-plugins/kubelet_internal_checkpoint`` when it is there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from podnuma.cm.cpumanager.policy_static import POLICY_STATIC as CPU_POLICY_STATIC
from podnuma.cm.memorymanager.policy_static import POLICY_STATIC as MEMORY_POLICY_STATIC
from podnuma.cm.memorymanager.state import Block
from podnuma.cm.topologymanager.policy import (
    POLICY_BEST_EFFORT,
    POLICY_RESTRICTED,
    POLICY_SINGLE_NUMA_NODE,
)
from podnuma.golang.strconv import go_quote
from podnuma.inputs.discover.export import bytes_quantity
from podnuma.inputs.state import PodRef, StateFiles, checkpoint_pod_uids, exclusive_cpu_sets
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.units import format_bytes

__all__ = ["ContainerState", "PodState", "Issue", "StateReport", "inspect_state"]


@dataclass(frozen=True)
class ContainerState:
    name: str
    cpus: CPUSet | None
    memory: tuple[Block, ...]
    numa_nodes: tuple[int, ...]
    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # resource -> ids


@dataclass(frozen=True)
class PodState:
    uid: str
    ref: PodRef | None
    cpus: CPUSet | None  # the pod-level set (podEntries)
    memory: tuple[Block, ...]  # the pod-level blocks
    containers: tuple[ContainerState, ...]


@dataclass(frozen=True)
class Issue:
    kind: str
    message: str
    pod_uid: str | None = None


@dataclass(frozen=True)
class StateReport:
    files: StateFiles
    pods: tuple[PodState, ...]
    issues: tuple[Issue, ...]
    default_cpuset: CPUSet | None
    machine: Machine | None = None
    pods_dump: Mapping[str, PodRef] | None = field(default=None, repr=False)


def _numa(blocks: tuple[Block, ...], cpus: CPUSet | None, machine: Machine | None) -> tuple[int, ...]:
    nodes = {n for b in blocks for n in b.numa_affinity}
    if cpus is not None and machine is not None:
        topo = machine.topology
        nodes |= {topo.cpu_numa_node_id(c) for c in cpus if c in topo.cpu_info}
    return tuple(sorted(nodes))


def _cpu_issues(files: StateFiles, issues: list[Issue]) -> None:
    cpu = files.cpu
    if cpu is None:
        return
    owner: dict[int, str] = {}
    sets = [
        (uid, f"the pod-level set of pod {uid}" if name is None else f"container {name!r} of pod {uid}", cpus)
        for uid, name, cpus in exclusive_cpu_sets(cpu)
    ]
    reported: set[tuple[str, str]] = set()
    for uid, what, cpus in sets:
        # the set's CPUs another pod holds, by that pod (in the order met):
        # one pass over the set, however many pods it overlaps
        held: dict[str, list[int]] = {}
        for c in cpus:
            first = owner.get(c)
            if first is None:
                owner[c] = uid
            elif first != uid:
                held.setdefault(first, []).append(c)
        for first, both in held.items():
            if (first, uid) not in reported:
                reported.add((first, uid))
                issues.append(
                    Issue(
                        "cpu-overlap",
                        f"CPUs {CPUSet(both)} are exclusive to pod {first} and to {what}",
                        uid,
                    )
                )
        shared = cpus.intersection(cpu.default_cpuset)
        if shared:
            issues.append(
                Issue("cpu-in-default-set", f"CPUs {shared} of {what} are also in the default set", uid)
            )
    for uid, budget in sorted(cpu.pod_entries.items()):
        for name, cpus in sorted(cpu.entries.get(uid, {}).items()):
            outside = cpus.difference(budget)
            if outside:
                issues.append(
                    Issue(
                        "cpu-outside-pod-budget",
                        f"container {name!r} of pod {uid} holds CPUs {outside} outside its pod's set {budget}",
                        uid,
                    )
                )


def _machine_cpu_issues(files: StateFiles, machine: Machine, issues: list[Issue]) -> None:
    """The static policy's start-up check of the checkpoint against the
    machine (its third, ``policy_static``'s ``_validate_state``): the shared
    pool and the exclusive sets together are exactly the machine's CPUs. A
    checkpoint written before CPUs went offline or the node was resized
    fails it, and the kubelet does not start."""
    cpu = files.cpu
    if cpu is None or cpu.policy_name != CPU_POLICY_STATIC or cpu.default_cpuset.is_empty():
        return
    known = cpu.default_cpuset
    for containers in cpu.entries.values():
        for cpus in containers.values():
            known = known | cpus
    for cpus in cpu.pod_entries.values():
        known = known | cpus
    everything = machine.topology.cpus()
    if known == everything:
        return
    only_missing = (known - everything).is_empty()  # (strict reservation leaves reserved CPUs out)
    issues.append(Issue(
        "cpus-not-machine",
        f"the checkpoint accounts for CPUs {known}, the machine has {everything}: the kubelet would not "
        f"start (current set of available CPUs {go_quote(str(everything))} doesn't match with CPUs in "
        f"state {go_quote(str(known))})"
        + (", unless its strict-cpu-reservation option holds the CPUs missing here"
           if only_missing else ""),
    ))


def _memory_issues(files: StateFiles, issues: list[Issue]) -> None:
    mem = files.memory
    if mem is None or not mem.machine_state:
        return
    reserved: dict[str, int] = {}
    for nid in sorted(mem.machine_state):
        node = mem.machine_state[nid]
        hugepages_total = sum(t.total for name, t in node.memory_map.items() if name != "memory")
        for name in sorted(node.memory_map):
            t = node.memory_map[name]
            reserved[name] = reserved.get(name, 0) + t.reserved
            if t.allocatable != t.reserved + t.free:
                issues.append(
                    Issue(
                        "memory-table",
                        f"NUMA node {nid} {name}: allocatable {t.allocatable} != reserved "
                        f"{t.reserved} + free {t.free}",
                    )
                )
            extra = hugepages_total if name == "memory" else 0
            if t.total != t.system_reserved + t.allocatable + extra:
                pools = f" + hugepage pools {extra}" if extra else ""
                issues.append(
                    Issue(
                        "memory-table",
                        f"NUMA node {nid} {name}: total {t.total} != systemReserved "
                        f"{t.system_reserved} + allocatable {t.allocatable}{pools}",
                    )
                )
    held: dict[str, int] = {}
    blocks: list[tuple[str, Block]] = []
    for uid, pod_blocks in mem.pod_entries.items():
        blocks += [(uid, b) for b in pod_blocks]
    for uid, containers in mem.entries.items():
        for bl in containers.values():
            if uid not in mem.pod_entries:
                blocks += [(uid, b) for b in bl]
            for b in bl:
                missing = [n for n in b.numa_affinity if n not in mem.machine_state]
                if missing:
                    issues.append(
                        Issue(
                            "memory-unknown-node",
                            f"pod {uid} holds {b.type} on NUMA node(s) {missing} the machine state lacks",
                            uid,
                        )
                    )
    for _, b in blocks:
        held[b.type] = held.get(b.type, 0) + b.size
    for name in sorted(set(reserved) | set(held)):
        r, h = reserved.get(name, 0), held.get(name, 0)
        if r != h:
            r_text, h_text = format_bytes(r, largest="Gi"), format_bytes(h, largest="Gi")
            issues.append(
                Issue("memory-reserved", f"{name}: the NUMA nodes reserve {r_text} but the assignments hold {h_text}")
            )


def _device_issues(files: StateFiles, issues: list[Issue]) -> None:
    dev = files.devices
    if dev is None:
        return
    if dev.error is not None:
        issues.append(
            Issue(
                "device-checkpoint-unreadable",
                f"the kubelet cannot read the device checkpoint ({dev.error}): it starts with no "
                "device allocated",
            )
        )
        return
    for e in dev.skipped:
        issues.append(
            Issue(
                "device-entry-skipped",
                f"the kubelet skips the {e.resource} entry of container {e.container!r} of pod "
                f"{e.pod_uid}: its allocation response does not decode",
                e.pod_uid,
            )
        )
    owner: dict[tuple[str, str], str] = {}
    reported: set[tuple[str, str, str]] = set()
    for uid, containers in sorted(dev.pods().items()):
        for resources in containers.values():
            for resource, ids in sorted(resources.items()):
                for dev_id in ids:
                    first = owner.setdefault((resource, dev_id), uid)
                    if first != uid and (first, uid, resource) not in reported:
                        reported.add((first, uid, resource))
                        issues.append(
                            Issue(
                                "device-overlap",
                                f"{resource} device {dev_id} is held by pod {first} and by pod {uid}",
                                uid,
                            )
                        )


def inspect_state(
    files: StateFiles,
    *,
    pods_dump: Mapping[str, PodRef] | None = None,
    machine: Machine | None = None,
) -> StateReport:
    cpu, mem = files.cpu, files.memory
    uids = checkpoint_pod_uids(cpu, mem)
    dev_pods = files.devices.pods() if files.devices is not None else {}
    uids |= set(dev_pods)
    pods: list[PodState] = []
    for uid in sorted(uids, key=lambda u: (str(pods_dump.get(u, "")) if pods_dump else "", u)):
        names: list[str] = []
        cpu_c = cpu.entries.get(uid, {}) if cpu is not None else {}
        mem_c = mem.entries.get(uid, {}) if mem is not None else {}
        dev_c = dev_pods.get(uid, {})
        for name in (*cpu_c, *mem_c, *dev_c):
            if name not in names:
                names.append(name)
        containers = []
        for name in names:
            blocks = tuple(mem_c.get(name, ()))
            cpus = cpu_c.get(name)
            devices = dict(sorted(dev_c.get(name, {}).items()))
            containers.append(ContainerState(name, cpus, blocks, _numa(blocks, cpus, machine), devices))
        pods.append(
            PodState(
                uid=uid,
                ref=pods_dump.get(uid) if pods_dump is not None else None,
                cpus=cpu.pod_entries.get(uid) if cpu is not None else None,
                memory=tuple(mem.pod_entries.get(uid, ())) if mem is not None else (),
                containers=tuple(containers),
            )
        )
    issues: list[Issue] = []
    _cpu_issues(files, issues)
    if machine is not None:
        _machine_cpu_issues(files, machine, issues)
    _memory_issues(files, issues)
    _device_issues(files, issues)
    if pods_dump is not None:
        for uid in sorted(uids):
            if uid not in pods_dump:
                issues.append(
                    Issue(
                        "pod-not-in-dump",
                        f"pod {uid} has entries but is not in the pods dump (gone, or another node's)",
                        uid,
                    )
                )
    return StateReport(
        files=files,
        pods=tuple(pods),
        issues=tuple(issues),
        default_cpuset=cpu.default_cpuset if cpu is not None else None,
        machine=machine,
        pods_dump=pods_dump,
    )


def _blocks_doc(blocks: tuple[Block, ...]) -> list[dict[str, object]]:
    return [b.to_json() for b in blocks]


def state_document(report: StateReport) -> dict[str, object]:
    """The report as JSON-ready data (``podnuma state inspect -o json``)."""
    files = report.files
    doc: dict[str, object] = {"directory": str(files.directory)}
    if files.cpu is not None:
        doc["cpuManager"] = {
            "file": "cpu_manager_state",
            "version": files.cpu_version,
            "policyName": files.cpu.policy_name,
            "defaultCpuSet": str(files.cpu.default_cpuset),
        }
    if files.memory is not None:
        doc["memoryManager"] = {
            "file": "memory_manager_state",
            "version": files.memory_version,
            "policyName": files.memory.policy_name,
            "machineState": {
                str(nid): {
                    "numberOfAssignments": node.number_of_assignments,
                    "cells": list(node.cells),
                    "memoryMap": {
                        name: {
                            "total": t.total,
                            "systemReserved": t.system_reserved,
                            "allocatable": t.allocatable,
                            "reserved": t.reserved,
                            "free": t.free,
                        }
                        for name, t in node.memory_map.items()
                    },
                }
                for nid, node in sorted(files.memory.machine_state.items())
            },
        }
    if files.devices is not None:
        doc["deviceManager"] = {
            "file": "device-plugins/kubelet_internal_checkpoint",
            "readable": files.devices.error is None,
            "registeredDevices": {r: list(ids) for r, ids in sorted(files.devices.registered.items())},
        }
    pods = []
    for p in report.pods:
        entry: dict[str, object] = {"uid": p.uid}
        if p.ref is not None:
            entry["namespace"], entry["name"] = p.ref.namespace, p.ref.name
            if p.ref.node is not None:
                entry["nodeName"] = p.ref.node
        if p.cpus is not None:
            entry["podCpus"] = str(p.cpus)
        if p.memory:
            entry["podMemory"] = _blocks_doc(p.memory)
        entry["containers"] = [
            {
                "name": c.name,
                "cpus": None if c.cpus is None else str(c.cpus),
                "numaNodes": list(c.numa_nodes),
                "memory": _blocks_doc(c.memory),
                **({"devices": {r: list(ids) for r, ids in c.devices.items()}} if files.devices else {}),
            }
            for c in p.containers
        ]
        pods.append(entry)
    doc["pods"] = pods
    doc["inconsistencies"] = [
        {"kind": i.kind, "message": i.message, **({"podUID": i.pod_uid} if i.pod_uid else {})}
        for i in report.issues
    ]
    return doc


#: the topology manager policies under which the kubelet writes a pod's own
#: set (a pod budget: ``podEntries``): only the pod scope of a policy other
#: than ``none`` hands a pod-level pod to the managers whole (the ``none``
#: policy's scope, whatever scope is configured, allocates container by
#: container), so a checkpoint holding one rules ``none`` out
POD_SET_POLICIES = (POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE)

#: the words of :func:`scenario_document`'s note on the policy it could not
#: infer, which a restart or a scenario that works it out replaces
NONE_ASSUMED = "(none assumed)"


def or_words(words: Sequence[str], last: str = "or") -> str:
    """``a``, ``a or b``, ``a, b or c`` (``last``: the last joining word)."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


def scenario_document(
    files: StateFiles,
    *,
    node: Mapping[str, object] | None,
    kubelet_config: Mapping[str, object] | None,
) -> tuple[dict[str, object], list[str]]:
    """A scenario whose ``state:`` is this directory's checkpoints, so the
    node's present state replays in ``simulate`` (``steps: []``; add steps).

    ``node``: the ``node`` mapping (e.g. from ``node discover``), else
    ``{sysfs: /sys}`` (replay on the node itself). ``kubelet_config``: the
    node's KubeletConfiguration; without it one is inferred from the
    checkpoints (policy names; the memory manager's per-NUMA
    ``systemReserved`` as ``reservedMemory``, with ``systemReserved`` memory
    = their sum minus the default 100Mi hard eviction). Returns the document
    and notes on what could not be inferred.
    """
    notes: list[str] = []
    config: dict[str, object]
    if kubelet_config is not None:
        config = dict(kubelet_config)
    else:
        config = {}
        if files.cpu is not None:
            config["cpuManagerPolicy"] = files.cpu.policy_name
            if files.cpu.policy_name == CPU_POLICY_STATIC:
                notes.append(
                    "the CPU manager checkpoint does not record reservedSystemCPUs (or the "
                    "kube/system-reserved CPU): add it to kubeletConfig, or pass --kubelet-config"
                )
        if files.memory is not None:
            config["memoryManagerPolicy"] = files.memory.policy_name
            if files.memory.policy_name == MEMORY_POLICY_STATIC:
                reserved = []
                total = 0
                for nid, st in sorted(files.memory.machine_state.items()):
                    limits = {
                        name: bytes_quantity(t.system_reserved)
                        for name, t in sorted(st.memory_map.items())
                        if t.system_reserved
                    }
                    if limits:
                        reserved.append({"numaNode": nid, "limits": limits})
                    table = st.memory_map.get("memory")
                    total += table.system_reserved if table is not None else 0
                if reserved:
                    config["reservedMemory"] = reserved
                eviction = 100 << 20
                if total >= eviction:
                    config["systemReserved"] = {"memory": bytes_quantity(total - eviction)}
                notes.append(
                    "reservedMemory comes from the checkpoint's per-NUMA systemReserved; "
                    "systemReserved memory assumes the default evictionHard (100Mi) and no kubeReserved"
                )
        pod_sets = (files.cpu is not None and bool(files.cpu.pod_entries)) or (
            files.memory is not None and bool(files.memory.pod_entries))
        if pod_sets:
            # only the managers of pod scope with pod-level resources write a
            # pod's own set (its budget): that configuration ran
            config["featureGates"] = {"PodLevelResources": True, "PodLevelResourceManagers": True}
            config["topologyManagerScope"] = "pod"
            notes.append(
                "warning: the checkpoints hold pod-level sets (pod budgets): featureGates PodLevelResources "
                "and PodLevelResourceManagers on and topologyManagerScope pod are inferred from them, but "
                f"not the topology manager policy {NONE_ASSUMED}, which decides where a pod-level pod goes "
                "when re-admitted: give the node's configuration (--kubelet-config)"
            )
    state: dict[str, object] = {}
    cpu_obj = files.raw_object("cpu")
    if cpu_obj is not None:
        state["cpuManager"] = cpu_obj
    mem_obj = files.raw_object("memory")
    if mem_obj is not None:
        state["memoryManager"] = mem_obj
    dev_obj = files.raw_object("devices")
    if dev_obj is not None:
        state["deviceManager"] = dev_obj
    elif files.devices_raw is not None:
        notes.append("the device checkpoint is not a JSON object: the kubelet ignores it, and so does the scenario")
    doc: dict[str, object] = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": dict(node) if node is not None else {"sysfs": "/sys"},
        "kubeletConfig": config,
        "state": state,
        "steps": [],
    }
    return doc, notes

"""One node of the fleet replayed through the engine, as is and under what-ifs.

:func:`replay_node` starts a :class:`podnuma.cm.container_manager.Node` from the node's
machine and kubelet configuration, admits its running pods in start order
(a pod podnuma rejects although it runs is a note: wrong inputs or drift),
then does the same under each what-if. It measures, per run:

* ``exclusiveCpus``: CPUs out of the node's shared pool (neither shared nor
  reserved): containers' exclusive slices plus pod-level budgets;
* ``sidecarOnlyCpus``: exclusive CPUs held by sidecars (restartable init
  containers, or containers named in ``podnuma.io/sidecars``) and by no
  other container of their pod;
* ``strandedCpus``: free CPUs no exclusive allocation can use: under the
  ``full-pcpus-only`` option, free CPUs whose core has a CPU held or
  reserved; under the Static memory manager, the free CPUs of a NUMA node
  whose free memory is below the smallest memory request of the node's
  Guaranteed pods;
* ``rejected``: the pods the node would refuse, with the kubelet's reason and
  message;
* ``numaSpread``: how many pods hold exclusive CPUs or pinned memory on 1,
  2... NUMA nodes;
* ``density``: for each Guaranteed workload on the node, the copies of it
  that fit on an empty node of the same shape and configuration (counted by
  the engine, as ``podnuma advise`` does).

Pure but for reading the node's pod files and machine files. The result is
a JSON-ready mapping; its content depends only on the node's inputs, so a
node gives the same result whatever process replays it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import marshal
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podnuma.analysis.measure import DENSITY_CAP, copy_name, measure
from podnuma.analysis.rewrite import sidecar_names
from podnuma.api._gates_v137 import GATES as _KNOWN_GATES
from podnuma.api.kubeletconfig import (
    LENIENT_DECODING,
    JSONObject,
    KubeletConfig,
    json_object_pairs,
    load_kubelet_config,
    strict_decoding_error,
)
from podnuma.api.pod import Pod
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.pod_types import without_unknown_fields
from podnuma.api.qos import compute_pod_qos, served_qos_class, with_status_qos
from podnuma.cm.container_manager import Node
from podnuma.cm.cpumanager.policy_options import FULL_PCPUS_ONLY_OPTION
from podnuma.cm.cpumanager.policy_static import POLICY_STATIC as CPU_POLICY_STATIC
from podnuma.cm.memorymanager.policy_static import POLICY_STATIC as MEMORY_POLICY_STATIC
from podnuma.cm.results import NodeSummary, StepResult
from podnuma.errors import InputError, KubeletStartupError, PodnumaError
from podnuma.fieldkit import type_name
from podnuma.fleet.assumptions import contradictions
from podnuma.fleet.copies import NodeDumps
from podnuma.fleet.gates import gate_changes
from podnuma.fleet.model import Issue, NodeSpec
from podnuma.fleet.pods import read_node_pods, start_order
from podnuma.fleet.podscan import (
    KeyedSpec,
    PodLabels,
    ScannedPod,
    in_start_order,
    node_pods,
    pods_of_ranges,
)
from podnuma.fleet.whatif import WhatIf, apply_config
from podnuma.golang import jsonnumbers as json_numbers
from podnuma.golang.rfc3339 import parses as rfc3339_parses
from podnuma.inputs.discover import load_node
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.scenario.run import RunResult

if TYPE_CHECKING:
    from podnuma.analysis.advise import Advice

__all__ = ["DensityScenario", "ReplayCache", "replay_node", "replay_partition", "workload_of", "node_run",
           "node_run_result", "node_scenarios", "node_scenarios_with_density"]

_HASH_SUFFIX = re.compile(r"-[a-z0-9]{5,10}$")


@dataclass
class ReplayCache:
    """Per-process memo of what depends only on (machine, configuration,
    pod spec): machines, parsed configurations, densities, advise verdicts.
    It changes no result, only the time taken."""

    machines: dict[str, Machine | InputError] = field(default_factory=dict)
    configs: dict[str, KubeletConfig | PodnumaError] = field(default_factory=dict)
    density: dict[tuple[Any, ...], tuple[int, str | None]] = field(default_factory=dict)
    advice: dict[tuple[Any, ...], Advice] = field(default_factory=dict)
    pods: dict[tuple[Any, ...], Pod | InputError] = field(default_factory=dict)
    sidecars: dict[tuple[Any, ...], frozenset[str]] = field(default_factory=dict)
    #: the parse and sidecars of each key of :attr:`pods` that parsed (the
    #: pods scanned from byte ranges look them up at once)
    parsed: dict[tuple[Any, ...], tuple[Pod, frozenset[str]]] = field(default_factory=dict)

    #: Entries kept at most per table; past that a table starts afresh
    #: (a fleet of per-node machine files must not keep every machine).
    LIMIT = 2048

    def trim(self) -> None:
        for table in (self.machines, self.configs, self.density, self.advice, self.pods, self.sidecars,
                      self.parsed):
            if len(table) > self.LIMIT:
                table.clear()


#: The memo of this process, shared by the partitions it replays (a Dask
#: worker or a pool process replays many): the densities and advise
#: verdicts of a fleet's few node shapes and workloads are computed once
#: per process instead of once per partition. Content-keyed; no result
#: depends on what it holds.
_PROCESS_CACHE = ReplayCache()


def _sig(obj: Any) -> str:
    # (a JSON number kept with its text is keyed by its text: 2e0 and
    # 2.0000000000000000001 are one float but two quantities)
    return json_numbers.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _quick_sig(obj: Any) -> bytes | str:
    """A content key for one pod's parts, several times quicker than
    :func:`_sig`: marshal format 2 (no back-references, so equal contents
    give equal bytes when their keys come in the same order, as they do in
    one workload's pods). Keys in another order only miss the memo. Values
    marshal cannot write (a YAML timestamp) fall back to :func:`_sig`."""
    try:
        return marshal.dumps(obj, 2)
    except ValueError:
        return _sig(obj)


def _machine(spec: NodeSpec, cache: ReplayCache, key: str | None = None) -> Machine:
    """The node's machine (``key``: :func:`_machine_key` of ``spec``, when
    the caller has it)."""
    assert spec.topology is not None
    form = {k: v for k, v in spec.topology.items() if k != "name"}
    if key is None:
        key = _sig(form)
    got = cache.machines.get(key)
    if got is None:
        try:
            got = load_node(form, base_dir=Path("."))
        except InputError as e:
            got = e
        cache.machines[key] = got
    if isinstance(got, InputError):
        raise got
    return got


def _machine_key(spec: NodeSpec) -> str:
    assert spec.topology is not None
    return _sig({k: v for k, v in spec.topology.items() if k != "name"})


def _config(doc: Mapping[str, Any], cache: ReplayCache, sig: str | None = None) -> KubeletConfig:
    """The configuration ``doc`` decodes to (``sig``: :func:`_sig` of
    ``doc``, when the caller has it)."""
    if sig is None:
        sig = _sig(doc)
    try:
        # duplicate fields are not in the mapping's content, only in its pairs
        key = sig + strict_decoding_error(doc)
    except InputError:
        key = sig
    got = cache.configs.get(key)
    if got is None:
        try:
            got = load_kubelet_config(doc)
        except (InputError, KubeletStartupError) as e:
            got = e
        cache.configs[key] = got
    if isinstance(got, PodnumaError):
        raise got
    return got


def _without_unknown_gates(doc: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[str]]:
    """The configuration without the feature gates kubelet v1.37 does not
    know, and their names. A running kubelet that reports such a gate in
    its configz knows it: the v1.37 kubelet's v1beta1 defaulting merges the
    file's gates into its own and panics on an unknown one ("failed to
    merge global and in-flight KubeletConfiguration while setting defaults,
    error: unrecognized feature gate: NAME"), so it never runs with one."""
    gates = doc.get("featureGates")
    if not isinstance(gates, Mapping):
        return doc, []
    unknown = [name for name in gates if isinstance(name, str) and name not in _KNOWN_GATES]
    if not unknown:
        return doc, []
    kept = {k: v for k, v in gates.items() if k not in unknown}
    if isinstance(doc, JSONObject):  # keep the pairs: duplicates are reported from them
        return json_object_pairs([(k, kept if k == "featureGates" else v) for k, v in doc.pairs]), unknown
    return {**doc, "featureGates": kept}, unknown


def workload_of(pod: Mapping[str, Any]) -> tuple[str, str]:
    """(kind, ``NAMESPACE/NAME``) of the pod's controller: a ReplicaSet's
    pod-template-hash suffix is taken off (its Deployment); a pod without
    an owner is its own workload."""
    if type(pod) is ScannedPod:
        return _workload(pod.namespace, pod.owners, pod.name, pod.labels)
    meta = pod.get("metadata") or {}
    return _workload(str(meta.get("namespace") or "default"), meta.get("ownerReferences"),
                     meta.get("name"), meta.get("labels"))


def _scanned_workload(doc: ScannedPod, name: str, shared: PodLabels) -> tuple[str, str]:
    """:func:`workload_of` a scanned pod: of one owner, it depends on its
    kind and name and the pod's labels alone, kept with those labels."""
    owners = doc.owners
    if type(owners) is list and len(owners) == 1 and type(owners[0]) is dict:
        kind, oname = owners[0].get("kind"), owners[0].get("name")
        if type(kind) is str and type(oname) is str:
            got = shared.workloads.get((kind, oname))
            if got is None:
                got = shared.workloads[(kind, oname)] = _workload(doc.namespace, owners, name, shared.labels)
            return got
    return _workload(doc.namespace, owners, name, shared.labels)


def _workload(ns: str, owners: Any, name: Any, labels: Any) -> tuple[str, str]:
    owners = owners or []
    owner = next((o for o in owners if isinstance(o, Mapping) and o.get("controller")), None)
    if owner is None and owners and isinstance(owners[0], Mapping):
        owner = owners[0]
    if owner is None:
        return "Pod", f"{ns}/{name}"
    kind, oname = str(owner.get("kind")), str(owner.get("name"))
    if kind == "ReplicaSet":
        h = (labels or {}).get("pod-template-hash")
        if isinstance(h, str) and oname.endswith(f"-{h}"):
            return "Deployment", f"{ns}/{oname[: -len(h) - 1]}"
        if _HASH_SUFFIX.search(oname):
            return "Deployment", f"{ns}/{_HASH_SUFFIX.sub('', oname)}"
    return kind, f"{ns}/{oname}"


def _pod_sig(doc: Mapping[str, Any], *, with_node: bool = False) -> Any:
    if not with_node and type(doc) is ScannedPod:
        return doc.key
    got = doc.get("spec")
    if not with_node and type(got) is KeyedSpec:
        return got.key  # the bytes it was decoded from: namespace, annotations, spec
    spec = {k: v for k, v in (doc.get("spec") or {}).items() if with_node or k != "nodeName"}
    ann = {k: v for k, v in ((doc.get("metadata") or {}).get("annotations") or {}).items()
           if str(k).startswith("podnuma.io/")}
    return _quick_sig({"spec": spec, "annotations": ann})


# --------------------------------------------------------------------------
# one run


@dataclass(slots=True)
class _Pod:
    doc: Mapping[str, Any]
    pod: Pod
    workload: tuple[str, str]
    sidecars: frozenset[str]
    rewritten: bool = False
    not_rewritten: str | None = None  # pod-level what-if: why advise does not rewrite it


def _exclusive_of(step: StepResult) -> CPUSet:
    cpus = CPUSet()
    for c in step.containers:
        if c.type != "init" and c.isolation == "container":
            cpus = cpus | c.cpus
    if step.pod_allocation is not None:
        cpus = cpus | step.pod_allocation.cpus
    return cpus


def _sidecar_only(step: StepResult, sidecars: frozenset[str]) -> CPUSet:
    if not sidecars:
        return CPUSet()
    side = CPUSet()
    other = CPUSet()
    for c in step.containers:
        if c.type == "init" or c.isolation != "container":
            continue
        if c.name in sidecars:
            side = side | c.cpus
        else:
            other = other | c.cpus
    return side - other


def _holds_exclusive(step: StepResult) -> bool:
    """Whether the pod holds a pod-level allocation, or one of its
    containers (not an init container) exclusive CPUs or pinned memory:
    what :func:`_sidecar_only` and :func:`_numa_of` count (both are empty
    otherwise)."""
    if step.pod_allocation is not None:
        return True
    for c in step.containers:
        if c.type != "init" and (c.memory or c.isolation == "container"):
            return True
    return False


def _numa_of(machine: Machine, step: StepResult) -> set[int]:
    """The NUMA nodes of the pod's exclusive CPUs (:func:`_exclusive_of`)
    and pinned memory."""
    info = machine.topology.cpu_info
    numa: set[int] = set()
    alloc = step.pod_allocation
    if alloc is not None:
        numa.update(info[cpu].numa_node for cpu in alloc.cpus.list())
        for b in alloc.memory:
            numa.update(b.numa_nodes)
    for c in step.containers:
        if c.type != "init":
            if c.isolation == "container":
                numa.update(info[cpu].numa_node for cpu in c.cpus.list())
            for b in c.memory:
                numa.update(b.numa_nodes)
    return numa


def _memory_request(pod: Pod) -> int:
    total = 0
    if pod.resources is not None and "memory" in pod.resources.requests:
        return int(pod.resources.requests["memory"].value())
    for c in pod.containers:
        q = c.requests.get("memory")
        if q is not None:
            total += int(q.value())
    return total


def node_run(
    machine: Machine,
    config: KubeletConfig,
    pods: Sequence[_Pod],
    *,
    node: str,
) -> tuple[dict[str, Any], list[StepResult], NodeSummary]:
    """Admit ``pods`` in order on a fresh node; the run's figures, the step
    results and the node's summary. ``KubeletStartupError`` when the kubelet
    would not start."""
    # the report reads no PodResources, hints or merges
    n = Node(machine, config, step_pod_resources=False, step_hints=False)
    all_cpus = machine.topology.cpus()
    reserved = n.summary().reserved_cpus & all_cpus
    static = config.cpu_manager_policy == CPU_POLICY_STATIC
    steps: list[StepResult] = []
    rejected: list[dict[str, Any]] = []
    sidecar_only = CPUSet()
    spread: dict[int, int] = {}
    spanning: list[str] = []
    min_mem: int | None = None
    # the smallest memory request of the Guaranteed pods strands CPUs only
    # under the Static memory manager (below)
    static_memory = config.memory_manager_policy == MEMORY_POLICY_STATIC
    admitted = 0
    add_pod = n.add_pod
    for i, p in enumerate(pods):
        try:
            r = add_pod(p.pod, i)
        except InputError as e:
            rejected.append({"pod": p.pod.ref, "workload": p.workload[1], "reason": "InvalidInput",
                             "message": e.message})
            continue
        steps.append(r)
        if not r.admitted:
            rejected.append({"pod": p.pod.ref, "workload": p.workload[1], "reason": r.reason,
                             "message": r.message, "stage": r.failed_stage})
            continue
        admitted += 1
        if _holds_exclusive(r):  # else no sidecar-only CPU and no NUMA node: nothing to count
            if p.sidecars:
                sidecar_only = sidecar_only | _sidecar_only(r, p.sidecars)
            numa = _numa_of(machine, r)
            if numa:
                spread[len(numa)] = spread.get(len(numa), 0) + 1
                if len(numa) > 1:
                    spanning.append(p.pod.ref)
        if static_memory and r.qos_class == "Guaranteed":
            mem = _memory_request(p.pod)
            if mem > 0:
                min_mem = mem if min_mem is None else min(min_mem, mem)
    held = CPUSet()
    if static and rejected:
        # A pod rejected after the CPU manager chose CPUs for it (the
        # memory manager, which allocates after it, or the allocation of a
        # later container of the pod refuses) keeps them in the CPU
        # manager's state: v1.37.2 releases nothing at admission. The pod
        # is Failed, so not active, and removeStaleState returns them to
        # the shared pool at the next pod's hints or allocation or on the
        # reconcile loop (every cpuManagerReconcilePeriod). They are not
        # pinned by any running pod.
        before = all_cpus - n.cpu.state.get_default_cpuset() - reserved
        n.reconcile(len(pods))
        held = before - (all_cpus - n.cpu.state.get_default_cpuset() - reserved)
    default = n.cpu.state.get_default_cpuset()
    if static:
        exclusive = all_cpus - default - reserved
        free = default - reserved
    else:
        exclusive = CPUSet()
        free = all_cpus - reserved
    stranded = CPUSet()
    if static and config.cpu_manager_policy_options.get(FULL_PCPUS_ONLY_OPTION) == "true":
        topo = machine.topology
        for cpu in free.list():
            siblings = topo.details.cpus_in_cores(topo.cpu_core_id(cpu))
            if not (siblings - free).is_empty():
                stranded = stranded | CPUSet.of(cpu)
    numa_rows: list[dict[str, Any]] = []
    mem_state = n.memory.state.get_machine_state() if static_memory else {}
    for nid in machine.numa_ids():
        cpus = machine.topology.details.cpus_in_numa_nodes(nid)
        row: dict[str, Any] = {
            "id": nid,
            "cpus": cpus.size(),
            "exclusive": (exclusive & cpus).size(),
            "free": (free & cpus).size(),
        }
        st = mem_state.get(nid)
        table = st.memory_map.get("memory") if st is not None else None
        if table is not None:
            row["memoryFree"] = table.free
            row["memoryAllocatable"] = table.allocatable
            if min_mem is not None and table.free < min_mem:
                stranded = stranded | (free & cpus)
        numa_rows.append(row)
    out = {
        "pods": len(pods),
        "admitted": admitted,
        "rejected": rejected,
        "cpus": all_cpus.size(),
        "reservedCpus": reserved.size(),
        "exclusiveCpus": exclusive.size(),
        "sidecarOnlyCpus": sidecar_only.size(),
        "freeCpus": free.size(),
        "rejectedPodCpus": held.size(),
        "strandedCpus": stranded.size(),
        "numaSpread": {str(k): v for k, v in sorted(spread.items())},
        "spanningPods": spanning,
        "numa": numa_rows,
    }
    summary = n.summary()
    _release(n)
    return out, steps, summary


def _release(node: Node) -> None:
    """Let ``node`` go as soon as the last reference to it does. Its
    managers and the topology manager point at each other (the topology
    manager keeps its hint providers, which keep it, as upstream's do), so
    a node no longer used would wait, with every pod's state in it, for
    the cyclic garbage collector: that pass cost about as much as a tenth
    of the replay. The hint providers are what closes every such loop;
    a node is not asked for hints after its run is read."""
    node.topology.providers.clear()


# --------------------------------------------------------------------------
# a node


_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def _parse(
    doc: Mapping[str, Any], config: KubeletConfig, cache: ReplayCache | None, gates_key: str = ""
) -> Pod:
    return _parse_keyed(doc, config, cache, gates_key)[0]


_OWNER_STRINGS = frozenset({"apiVersion", "kind", "name", "uid"})
_OWNER_BOOLS = frozenset({"controller", "blockOwnerDeletion"})


def _plain_time(t: Any) -> bool:
    """``t`` (a ``metav1.Time``'s value) is none or a string Go's RFC 3339
    parse takes."""
    return t is None or (type(t) is str and rfc3339_parses(t))


def _plain_owners(owners: Any) -> bool:
    """``metadata.ownerReferences`` is none or a list of owner references
    whose known fields are of their types (all the parse checks of them)."""
    if owners is None:
        return True
    if type(owners) is not list:
        return False
    for o in owners:
        if o is None:
            continue
        if type(o) is not dict:
            return False
        for k, v in o.items():
            tv = type(v)
            if tv is str:
                if k in _OWNER_BOOLS:
                    return False
            elif tv is bool:
                if k in _OWNER_STRINGS:
                    return False
            elif v is not None and (k in _OWNER_STRINGS or k in _OWNER_BOOLS):
                return False
    return True


def _plain_rest(doc: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    """Whether ``parse_pod`` certainly takes what it reads of the pod
    ``doc`` outside the key of its memo (:func:`_parse_keyed`) and the
    pod's identity (name, uid, labels: checked by the caller): the top
    level's ``apiVersion``, ``kind`` and ``status`` (a compact pod's
    ``phase``, ``startTime`` and ``qosClass``), ``metadata.generateName``,
    ``creationTimestamp`` and ``ownerReferences`` and ``spec.nodeName``,
    by their exact JSON types (a :class:`JSONNumberText` is a number, not
    a string) and Go's RFC 3339 parse. A pod for which this is not so is
    parsed by itself, never from or into the memo: its answer is its own
    (parse_pod's first error), whatever pod came before it."""
    for k, v in doc.items():
        if k == "metadata" or k == "spec" or v is None:
            continue
        if k == "apiVersion":
            if type(v) is not str or v != "v1":
                return False
        elif k == "kind":
            if type(v) is not str or v != "Pod":
                return False
        elif k == "status":
            if type(v) is not dict:
                return False
            for sk, sv in v.items():
                if sv is None:
                    continue
                if sk == "startTime":
                    if not _plain_time(sv):
                        return False
                elif sk not in ("phase", "qosClass") or type(sv) is not str:
                    return False
        else:
            return False
    gname = meta.get("generateName")
    if gname is not None and type(gname) is not str:
        return False
    spec = doc.get("spec")
    node = spec.get("nodeName") if isinstance(spec, Mapping) else None
    return ((node is None or type(node) is str) and _plain_time(meta.get("creationTimestamp"))
            and _plain_owners(meta.get("ownerReferences")))


def _plain_scanned(doc: ScannedPod) -> bool:
    """:func:`_plain_rest` of a scanned pod, from what was decoded of it."""
    gname, created, started, qos = doc.rest()
    return ((gname is None or type(gname) is str) and (qos is None or type(qos) is str)
            and (doc.node is None or type(doc.node) is str) and _plain_time(created)
            and _plain_time(started) and _plain_owners(doc.owners))


def _parse_keyed(
    doc: Mapping[str, Any], config: KubeletConfig, cache: ReplayCache | None, gates_key: str = ""
) -> tuple[Pod, tuple[Any, ...] | None]:
    """``parse_pod``, memoised on what it reads besides the pod's identity:
    pods of one workload differ only by name, uid and labels, which are
    put back on the memoised parse (a name that is not a plain DNS
    subdomain goes through the full parse and its error). Only a pod
    whose identity and other fields outside the key are certainly taken
    (exact types: :func:`_plain_rest`) is memoised or answered from the
    memo, so a refusal the memo keeps is one of the key's fields, the
    same for every pod of that key; any other pod is parsed by itself."""
    meta = doc.get("metadata") or {}
    name, uid, labels = meta.get("name"), meta.get("uid"), meta.get("labels")
    if (cache is None or type(name) is not str or not _NAME.match(name)
            or type(uid) is not str or not uid
            or not (labels is None or (type(labels) is dict
                                       and all(type(v) is str for v in labels.values())))
            or not _plain_rest(doc, meta)):
        return parse_pod(doc, gates=config.feature_gates, lenient=True), None
    spec = doc.get("spec")
    if type(spec) is KeyedSpec:
        # decoded from the dump's bytes: the key is those bytes
        key: tuple[Any, ...] = (gates_key or _sig(config.feature_gates.explicit()), spec.key)
    else:
        rest = {k: v for k, v in meta.items() if k not in ("name", "uid", "labels", "generateName",
                                                           "creationTimestamp", "ownerReferences")}
        key = (gates_key or _sig(config.feature_gates.explicit()), _quick_sig(rest), _pod_sig(doc))
    got = cache.pods.get(key)
    if got is None:
        try:
            got = parse_pod(doc, gates=config.feature_gates, lenient=True)
        except InputError as e:
            got = e
        cache.pods[key] = got
        return _raise_or(got), key
    template = _raise_or(got)
    return template.with_identity(name, uid, labels or {}), key


def _raise_or(got: Pod | InputError) -> Pod:
    if isinstance(got, InputError):
        raise got
    return got


def _parse_pods(
    docs: Sequence[Mapping[str, Any]], config: KubeletConfig, node: str,
    cache: ReplayCache | None = None, dumps: NodeDumps | None = None,
) -> tuple[list[_Pod], list[Issue]]:
    """The pods ``docs`` parsed; a pod that cannot be is not replayed, with
    a warning naming the dump it was read from (``dumps``: the node's)."""
    pods: list[_Pod] = []
    issues: list[Issue] = []
    gates_key = _sig(config.feature_gates.explicit())
    known = cache.parsed if cache is not None else {}
    for doc in docs:
        if type(doc) is ScannedPod and cache is not None:
            # a pod of a spec already parsed: that parse under this pod's identity
            name, uid, shared = doc.name, doc.uid, doc.shared
            hit = known.get((gates_key, doc.key))
            if (hit is not None and type(name) is str and type(uid) is str and uid and shared.plain
                    and _NAME.match(name) and _plain_scanned(doc)):
                pods.append(_Pod(doc, hit[0].with_identity(name, uid, shared.labels or {}),
                                 _scanned_workload(doc, name, shared), hit[1]))
                continue
        try:
            pod, key = _parse_keyed(doc, config, cache, gates_key)
        except InputError as e:
            issues.append(Issue("warning", f"{_pod_ref(doc)} not replayed: {e.message}", node=node,
                                file=dumps.source(doc) if dumps is not None else None, path=e.path))
            continue
        if key is None or cache is None:
            sidecars = sidecar_names(pod)
        else:  # derived from the spec and annotations alone, as the parse is
            got = cache.sidecars.get(key)
            if got is None:
                got = cache.sidecars[key] = sidecar_names(pod)
            sidecars = got
            template = cache.pods.get(key)
            if type(template) is Pod:
                cache.parsed[key] = (template, sidecars)
        pods.append(_Pod(doc=doc, pod=pod, workload=workload_of(doc), sidecars=sidecars))
    _served_classes(pods, config, issues, node)
    return _unique_uids(*_unique_names(pods, issues, node, dumps), node)


def _status_value(doc: Any) -> object:
    """What the pod of ``doc`` holds as its ``status.qosClass``."""
    if type(doc) is ScannedPod:
        return doc.rest()[3]
    status = doc.get("status")
    return status.get("qosClass") if isinstance(status, Mapping) else None


def _served_classes(pods: Sequence[_Pod], config: KubeletConfig, issues: list[Issue], node: str) -> None:
    """Each pod's QoS class as the kubelet reads it (``GetPodQOS``): the
    API server's ``status.qosClass`` when the dump has one, else the class
    of the spec. The class is fixed when the pod is created; a pod created
    under other gates (an empty ``spec.resources`` before
    ``PodLevelResourcesFixKubeletQOSClass``) keeps a class its spec no
    longer gives, and the managers go by it. Such a pod is named in an
    ``info`` issue: a scenario written of the node (``--as-scenario``)
    creates its pods again, and the replay of it computes the class. A
    served value none of the three classes is read by the kubelet as it
    is, the pod not Guaranteed to its managers (:func:`served_qos_class`):
    said in an ``info`` issue too."""
    gates = config.feature_gates
    plr = gates.enabled("PodLevelResources")
    fix = gates.enabled("PodLevelResourcesFixKubeletQOSClass")
    # pods sharing a parse share the copy's memo (keyed by the parse's memo,
    # which the entry keeps alive)
    copies: dict[tuple[int, str], tuple[Pod, Pod]] = {}
    for p in pods:
        value = _status_value(p.doc)
        served = served_qos_class(value)
        if served is None:
            continue
        pod = p.pod
        k = (id(pod.memo()), served)
        got = copies.get(k)
        if got is None:
            copy = with_status_qos(pod, served)
            copies[k] = (pod, copy)
        else:
            copy = got[1].with_identity(pod.name, pod.uid, pod.labels)
        computed = compute_pod_qos(pod, pod_level_resources=plr, fix_kubelet_qos_class=fix)
        if value != served:
            issues.append(Issue("info", f"pod {pod.ref}: its status.qosClass {value!r} is none of the three QoS "
                                "classes; the kubelet reads it as it is and its managers take the pod as not "
                                f"Guaranteed (nothing of its own): replayed as {served}, while its spec gives "
                                f"{computed}", node=node))
        elif computed != served:
            issues.append(Issue("info", f"pod {pod.ref}: replayed as {served}, its status.qosClass (the class "
                                f"the kubelet reads), while its spec gives {computed}; a scenario written of "
                                "the node creates the pod again and so computes the class", node=node))
        p.pod = copy


def _pod_ref(doc: Mapping[str, Any]) -> str:
    """How an issue names a pod: ``pod NAMESPACE/NAME``; a pod without a
    usable name or namespace (not a non-empty string) by what it has,
    never a Python value's text (``None``)."""
    meta = doc.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    ns, name = meta.get("namespace"), meta.get("name")
    if ns is None or ns == "":
        ns = "default"
    # (a number past the float range is read as its text: a number, not a name)
    if type(name) is str and name:
        return f"pod {ns}/{name}" if type(ns) is str else f"pod {name} (its namespace is {type_name(ns)})"
    where = f"in namespace {ns}" if type(ns) is str else f"whose namespace is {type_name(ns)}"
    what = "without a name" if name is None or name == "" else f"whose name is {type_name(name)}"
    return f"a pod {where} {what}"


def _unique_uids(pods: list[_Pod], issues: list[Issue], node: str) -> tuple[list[_Pod], list[Issue]]:
    """``pods`` (in start order) without a pod whose UID an earlier one
    has, each named in an issue: a UID names one pod (the kubelet would
    take the second for the first, already running), so two pods of one
    UID are an input problem, not a rejection; the first is replayed."""
    first: dict[str, str] = {}
    kept: list[_Pod] = []
    for p in pods:
        had = first.get(p.pod.uid)
        if had is not None:
            issues.append(Issue("warning", f"pod {p.pod.ref} not replayed: it has the uid {p.pod.uid} of "
                                f"pod {had}, replayed before it (a uid names one pod: the inputs are wrong)",
                                node=node))
            continue
        first[p.pod.uid] = p.pod.ref
        kept.append(p)
    return kept, issues


def _newer(p: _Pod) -> tuple[str, str, str]:
    """What tells the newer of two pods of one namespace and name (one
    re-created under the other's name): its creation, then its start
    (:func:`~podnuma.fleet.pods.start_order`), then its uid (whatever
    the order the dumps were read in)."""
    meta = p.doc.get("metadata")
    status = p.doc.get("status")
    created = meta.get("creationTimestamp") if isinstance(meta, Mapping) else None
    started = status.get("startTime") if isinstance(status, Mapping) else None
    return (start_order(created) if isinstance(created, str) else "",
            start_order(started) if isinstance(started, str) else "", p.pod.uid)


def _uid_in(p: _Pod, dumps: NodeDumps | None) -> str:
    """A pod's uid and the dump it was read from, for an issue."""
    got = dumps.source(p.doc) if dumps is not None else None
    return f"uid {p.pod.uid}" + (f" in {got}" if got else "")


def _unique_names(pods: list[_Pod], issues: list[Issue], node: str,
                  dumps: NodeDumps | None) -> tuple[list[_Pod], list[Issue]]:
    """``pods`` (in start order) with one pod of each namespace and name:
    the API server holds one pod of a name at a time, so two uids of one
    name (a pod deleted and re-created between two dumps, or while one
    was taken) are an input problem, not a rejection (the kubelet would
    refuse the second as already running); the newer (:func:`_newer`) is
    replayed, as the node runs it now, with a warning naming both uids and
    the dumps they were read from (``dumps``: the node's)."""
    kept: dict[str, int] = {}
    dropped: set[int] = set()
    for i, p in enumerate(pods):
        ref = p.pod.ref
        j = kept.get(ref)
        if j is None:
            kept[ref] = i
            continue
        old, new = (j, i) if _newer(pods[j]) <= _newer(p) else (i, j)
        dropped.add(old)
        kept[ref] = new
        issues.append(Issue(
            "warning", f"pod {ref} is in the dumps twice with two uids ({_uid_in(pods[new], dumps)}, "
            f"{_uid_in(pods[old], dumps)}): re-created under its name between two dumps; replayed once, "
            f"as the node runs it now: the newer, uid {pods[new].pod.uid} (the API server holds one "
            "pod of a name at a time: the inputs are of two moments)", node=node))
    if not dropped:
        return pods, issues
    return [p for i, p in enumerate(pods) if i not in dropped], issues


def _density_pods(pods: Sequence[_Pod]) -> dict[str, _Pod]:
    """The pod measured for each workload's density (by workload name, in
    name order): its first Guaranteed pod (a DaemonSet's and a static pod's
    run one per node: none)."""
    out: dict[str, _Pod] = {}
    for p in pods:
        kind, name = p.workload
        if kind in ("DaemonSet", "Node") or name in out:
            continue
        if compute_pod_qos(p.pod, pod_level_resources=True) != "Guaranteed":
            continue
        out[name] = p
    return dict(sorted(out.items()))


def _density_of(
    machine: Machine, mkey: str, config: KubeletConfig, ckey: str, p: _Pod, cache: ReplayCache,
) -> tuple[int, str | None]:
    """The copies of ``p`` that fit on an empty node (the engine counting
    them, as ``podnuma advise`` does) and the reason of the first refused."""
    key = (mkey, ckey, _pod_sig(p.doc))
    got = cache.density.get(key)
    if got is None:
        m = measure(machine, config, p.pod, label="density", sidecars=p.sidecars)
        got = (m.density, m.density_stop)
        cache.density[key] = got
    return got


def _density(
    machine: Machine, mkey: str, config: KubeletConfig, ckey: str, pods: Sequence[_Pod],
    cache: ReplayCache,
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, p in _density_pods(pods).items():
        copies, stop = _density_of(machine, mkey, config, ckey, p, cache)
        out[name] = {"kind": p.workload[0], "copies": copies, "stop": stop}
    return out


def _rewrite(
    pods: Sequence[_Pod], machine: Machine, mkey: str, base: KubeletConfig, bkey: str,
    config: KubeletConfig, cache: ReplayCache, shared_pool_cpus: int | None = None,
) -> list[_Pod]:
    """Each pod as ``podnuma advise`` would rewrite it (verified by advise on
    an empty node of this shape under the node's configuration)."""
    out: list[_Pod] = []
    for p in pods:
        key = (mkey, bkey, _pod_sig(p.doc), shared_pool_cpus)
        advice = cache.advice.get(key)
        if advice is None:
            from podnuma.analysis.advise import advise_pod  # the pod-level what-if only

            # (advise refuses an unknown field: the kubelet never saw one)
            advice = advise_pod(dict(without_unknown_fields(p.doc)), machine, base,
                                shared_pool_cpus=shared_pool_cpus)
            cache.advice[key] = advice
        if advice.status != "rewritten" or advice.rewrite is None:
            out.append(_Pod(doc=p.doc, pod=p.pod, workload=p.workload, sidecars=p.sidecars,
                            rewritten=p.rewritten, not_rewritten=advice.reason or "not rewritten"))
            continue
        # The verdict is shared by every pod with this spec: the rewrite's
        # metadata is this pod's own.
        manifest = dict(advice.rewrite.manifest)
        manifest["metadata"] = dict(p.doc.get("metadata") or {})
        pod = parse_pod(manifest, gates=config.feature_gates, lenient=True)
        out.append(_Pod(doc=manifest, pod=pod, workload=p.workload, sidecars=p.sidecars,
                        rewritten=True))
    return out


def _restart(spec: NodeSpec, config_doc: Mapping[str, Any], pods: Sequence[_Pod]) -> dict[str, Any]:
    """``--what-if restart``: the node's pods admitted as in the run, then a
    kubelet restart (``podnuma restart``); the scenario replays it."""
    # (without the fields v1.37.2 lacks: the restart decodes as the API server does)
    steps = [{"addPod": dict(without_unknown_fields(p.doc))} for p in pods]
    doc = {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {k: v for k, v in (spec.topology or {}).items()},
        "kubeletConfig": dict(config_doc),
        "steps": steps,
    }
    from podnuma.analysis.restart import restart_after_document, restart_summary
    from podnuma.fleet.restart import served_classes

    # the class each pod is replayed with (the served one: _served_classes),
    # before and after the restart, where the scenario's pods would compute it
    served = served_classes(steps)
    try:
        return restart_summary(restart_after_document(doc, name=f"node {spec.name}", served=served))
    except PodnumaError as e:
        return {"error": f"restart not replayed: {e}"}


def replay_node(
    spec: NodeSpec,
    what_ifs: Sequence[WhatIf] = (),
    *,
    pods: Sequence[Mapping[str, Any]] | None = None,
    cache: ReplayCache | None = None,
) -> dict[str, Any]:
    """The node's report (JSON-ready). ``pods``: the node's compact pods in
    start order when the caller already read them (else from ``spec``)."""
    cache = cache if cache is not None else ReplayCache()
    issues = list(spec.issues)
    report: dict[str, Any] = {
        "name": spec.name,
        "labels": dict(sorted(spec.labels.items())),
        "configSource": spec.config_source,
        "topologySource": spec.topology_source,
        "status": "ok",
    }
    if pods is None:
        if spec.pods is not None:
            pods = spec.pods
        else:
            pods, file_issues = node_pods(spec.name, spec.pod_files, spec.pod_ranges)
            issues.extend(Issue(i.severity if i.severity == "warning" else "warning", i.message,
                                node=spec.name, file=i.file, path=i.path) for i in file_issues)
    report["podCount"] = len(pods)

    def finish(status: str) -> dict[str, Any]:
        report["status"] = status
        report["issues"] = [i.as_dict() for i in issues]
        return report

    if spec.topology is None or any(i.severity == "error" for i in issues):
        return finish("error")
    mkey = _machine_key(spec)
    try:
        machine = _machine(spec, cache, mkey)
    except InputError as e:
        issues.append(Issue("error", f"topology not usable: {e.message}", node=spec.name,
                            file=e.file, path=e.path))
        return finish("error")
    base_doc = spec.config if spec.config is not None else {}
    base_doc, unknown = _without_unknown_gates(base_doc)
    if unknown:
        configz = "configz" in (spec.config_source or "")
        issues.append(Issue(
            "warning",
            f"{'configz' if configz else 'the configuration'} sets feature gate(s) kubelet v1.37 "
            f"does not know ({', '.join(unknown)}): "
            + ("this kubelet is another version, most likely a newer one"
               if configz else "written for another kubelet version, most likely a newer one "
               "(or a misspelt gate)")
            + " (a v1.37 kubelet refuses to start with an unknown gate: \"unrecognized feature "
            "gate\"); replayed as v1.37 without them",
            node=spec.name, file=spec.config_source or None,
        ))
    bkey = _sig(base_doc)
    try:
        config = _config(base_doc, cache, bkey)
    except PodnumaError as e:
        what = "invalid kubelet configuration" if isinstance(e, InputError) else "the kubelet would not start"
        issues.append(Issue("error", f"{what}: {e}", node=spec.name))
        return finish("error")
    if config.decode_warning:
        issues.append(Issue(
            "warning",
            f"kubelet configuration decoded leniently, as the kubelet does (it logs "
            f"\"{LENIENT_DECODING}\"): {config.decode_warning}",
            node=spec.name, file=spec.config_source or None,
        ))
    found = contradictions(config, machine.topology.cpus().size(), allocatable=spec.allocatable,
                           capacity=spec.capacity, nrt_attributes=spec.nrt_attributes)
    if spec.config is None or spec.config_source.startswith("kubelet defaults"):
        # the kubelet's defaults (--set on top of them too) are an
        # assumption: the node is shown apart
        report["configAssumed"] = True
        report["contradictions"] = found
    else:
        issues.extend(Issue("warning", f"{c} ({spec.config_source})", node=spec.name)
                      for c in found)
    dumps = NodeDumps(spec) if spec.pods is None else None
    if dumps is not None and (spec.pods_dumped_again or spec.pods_listed_again):
        issues.extend(dumps.differing_copies())
    parsed, pod_issues = _parse_pods(pods, config, spec.name, cache, dumps)
    issues.extend(pod_issues)
    report["machine"] = {
        "cpus": machine.topology.cpus().size(),
        "numaNodes": len(machine.numa_ids()),
        "sockets": machine.topology.num_sockets,
        "threadsPerCore": machine.topology.cpus_per_core(),
    }
    report["config"] = {
        "cpuManagerPolicy": config.cpu_manager_policy,
        "memoryManagerPolicy": config.memory_manager_policy,
        "topologyManagerPolicy": config.topology_manager_policy,
        "topologyManagerScope": config.topology_manager_scope,
        "cpuManagerPolicyOptions": dict(sorted(config.cpu_manager_policy_options.items())),
    }
    try:
        base, base_steps, _ = node_run(machine, config, parsed, node=spec.name)
    except KubeletStartupError as e:
        issues.append(Issue("error", f"the kubelet would not start: {e}", node=spec.name))
        return finish("error")
    for r in base["rejected"]:
        issues.append(Issue(
            "warning",
            f"podnuma rejects {r['pod']}, which is running ({r['reason']}: {r['message']}): "
            "the inputs are wrong or the node has drifted",
            node=spec.name,
        ))
    base["density"] = _density(machine, mkey, config, bkey, parsed, cache)
    report["baseline"] = base
    runs: dict[str, Any] = {}
    for w in what_ifs:
        doc = apply_config(base_doc, w)
        wkey = _sig(doc)
        try:
            wcfg = _config(doc, cache, wkey)
        except PodnumaError as e:
            runs[w.label] = {"error": f"{'invalid configuration' if isinstance(e, InputError) else 'the kubelet would not start'}: {e}"}
            continue
        wpods = parsed
        if w.pod_level or w.gates:
            # Parse again under the what-if's gates (then, for pod-level,
            # rewrite as advise does).
            wpods, _ = _parse_pods([p.doc for p in parsed], wcfg, spec.name, cache)
        if w.pod_level:
            wpods = _rewrite(wpods, machine, mkey, config, bkey, wcfg, cache, w.shared_pool_cpus)
        try:
            run, wsteps, _ = node_run(machine, wcfg, wpods, node=spec.name)
        except KubeletStartupError as e:
            runs[w.label] = {"error": f"the kubelet would not start: {e}"}
            continue
        run["rewrittenPods"] = sum(1 for p in wpods if p.rewritten)
        if w.pod_level:
            run["notRewritten"] = [
                {"pod": p.pod.ref, "reason": p.not_rewritten} for p in wpods if not p.rewritten
            ]
        if w.gates:
            run["changedPods"] = gate_changes(base_steps, wsteps)
        run["density"] = _density(machine, mkey, wcfg, wkey, wpods, cache)
        if w.restart:
            run["restart"] = _restart(spec, doc, wpods)
        runs[w.label] = run
    report["whatIfs"] = runs
    return finish("ok" if not any(i.severity == "warning" for i in issues) else "warning")


def replay_partition(
    specs: Sequence[NodeSpec], what_ifs: Sequence[WhatIf] = (), cache: ReplayCache | None = None
) -> list[dict[str, Any]]:
    """Replay a group of nodes, reading each pod file once for the group
    (``cache``: default, this process's memo)."""
    with _collector_paused():
        return _replay_partition(specs, what_ifs, cache)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a partition is replayed (on
    again after): the replay makes many small objects and drops them by
    their reference counts, and the collector's passes over everything
    alive (the partition's pods and results, the memo) cost about a tenth
    of the replay and find next to nothing. A partition's size is bounded
    (:data:`podnuma.fleet.execute.MAX_PARTITION_PODS` pods), so is what it
    holds meanwhile."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _replay_partition(
    specs: Sequence[NodeSpec], what_ifs: Sequence[WhatIf], cache: ReplayCache | None
) -> list[dict[str, Any]]:
    if cache is None:
        cache = _PROCESS_CACHE
        cache.trim()
    files = sorted({f for s in specs if s.pods is None for f in s.pod_files})
    names = [s.name for s in specs if s.pods is None and s.pod_files]
    by_node, file_issues = read_node_pods(files, names) if files else ({}, [])
    ranged, range_errors = pods_of_ranges(
        {s.name: s.pod_ranges for s in specs if s.pods is None and s.pod_ranges}, scanned=True)
    out: list[dict[str, Any]] = []
    for s in specs:
        if s.pods is not None:
            out.append(replay_node(s, what_ifs, cache=cache))
            continue
        extra = [Issue("warning", i.message, node=s.name, file=i.file)
                 for i in file_issues if i.file in s.pod_files]
        extra.extend(Issue("warning", e.message, node=s.name, file=e.file, path=e.path)
                     for n, e in range_errors if n == s.name)
        spec = s if not extra else _with_issues(s, extra)
        pods = by_node.get(s.name, [])
        if s.name in ranged:
            pods = in_start_order(s.name, pods, ranged.pop(s.name))
        out.append(replay_node(spec, what_ifs, pods=pods, cache=cache))
    return out


def _with_issues(spec: NodeSpec, extra: Sequence[Issue]) -> NodeSpec:
    from dataclasses import replace

    return replace(spec, issues=(*spec.issues, *extra))


def node_run_result(spec: NodeSpec) -> RunResult | None:
    """The node's pods replayed as they run, as a scenario run result (for
    the topology picture of the node); ``None`` when the node cannot be
    replayed."""
    if spec.topology is None:
        return None
    cache = ReplayCache()
    try:
        machine = _machine(spec, cache)
        config = _config(_without_unknown_gates(dict(spec.config or {}))[0], cache)
    except PodnumaError:
        return None
    if spec.pods is not None:
        pods: Sequence[Mapping[str, Any]] = spec.pods
    else:
        pods = node_pods(spec.name, spec.pod_files, spec.pod_ranges)[0]
    parsed, _ = _parse_pods(pods, config, spec.name)
    try:
        _, steps, summary = node_run(machine, config, parsed, node=spec.name)
    except KubeletStartupError:
        return None
    machine = machine.replace(name=spec.name)
    return RunResult(scenario=spec.name, machine=machine, node=summary, steps=tuple(steps),
                     checkpoints={}, checkpoint_files={})


@dataclass(frozen=True)
class DensityScenario:
    """The replay of one density figure: ``copies`` of ``workload``'s pod
    (a ``kind``) fit on an empty node of the run ``run`` (its label), then
    one is refused (``stop``: why; none past the count's cap, ``capped``).
    ``index``: the workload's place (from 1) in the run's ``density``
    (workloads in name order). ``scenario``: the node, the run's
    configuration and one ``addPod`` per copy, as the count added them
    (the pod itself, then ``NAME-i`` with the UID derived from its name),
    so ``steps[copies]`` is the refusal."""

    run: str
    index: int
    workload: str
    kind: str
    copies: int
    stop: str | None
    capped: bool
    scenario: dict[str, Any]


def _copy_doc(doc: Mapping[str, Any], i: int) -> dict[str, Any]:
    """The ``i``-th copy of a pod's scenario form as :func:`measure` adds
    it: the pod itself, then ``NAME-i`` without its UID (derived from the
    namespace and name, as the count derives it)."""
    out = json.loads(json.dumps(doc))
    if i:
        meta = dict(out.get("metadata") or {})
        meta["name"] = copy_name(str(meta.get("name") or ""), i)
        meta.pop("uid", None)
        out["metadata"] = meta
    assert isinstance(out, dict)
    return out


def node_scenarios(
    spec: NodeSpec, what_ifs: Sequence[WhatIf] = (), *, baseline: str = "as running",
) -> dict[str, dict[str, Any]]:
    """The node's runs as scenarios (the scenario contract's documents), by
    run label: the machine, the configuration the run used (unknown gates
    dropped, the what-if's changes applied), one ``addPod`` per pod the
    run admitted or rejected, in the same order and form (a ``pod-level``
    what-if's rewrites included), then a ``reconcile`` pass, after which
    the figures of the report are read. ``podnuma simulate`` and the
    kubelet oracle replay them; a what-if the kubelet would not start with
    is written too (both report the refusal the report gives). A node
    without a usable machine or configuration has none."""
    return node_scenarios_with_density(spec, what_ifs, baseline=baseline, density=False)[0]


def node_scenarios_with_density(
    spec: NodeSpec, what_ifs: Sequence[WhatIf] = (), *, baseline: str = "as running", density: bool = True,
) -> tuple[dict[str, dict[str, Any]], list[DensityScenario]]:
    """:func:`node_scenarios`, and (``density``) the replay of each density
    figure of each run (:class:`DensityScenario`: the run's workloads
    counted again, on the pods and configuration of its scenario)."""
    densities: list[DensityScenario] = []
    if spec.topology is None:
        return {}, densities
    cache = ReplayCache()
    try:
        machine = _machine(spec, cache)
        base_doc = _without_unknown_gates(spec.config if spec.config is not None else {})[0]
        config = _config(base_doc, cache)
    except PodnumaError:
        return {}, densities
    if spec.pods is not None:
        pods: Sequence[Mapping[str, Any]] = spec.pods
    else:
        pods = node_pods(spec.name, spec.pod_files, spec.pod_ranges)[0]
    parsed, _ = _parse_pods(pods, config, spec.name, cache)
    mkey = _sig({k: v for k, v in spec.topology.items() if k != "name"})
    node_form = {**{k: v for k, v in spec.topology.items() if k != "name"}, "name": spec.name}
    for key in ("machineInfoFile", "sysfs"):  # the scenario is read from another directory
        if isinstance(node_form.get(key), str):
            node_form[key] = str(Path(node_form[key]).resolve())

    def pod_form(p: _Pod) -> dict[str, Any]:
        # (a quantity read from a JSON number's text keeps that text; a
        # field v1.37.2 lacks, which the replay dropped, is left out: the
        # scenario is decoded strictly, as the API server does)
        got = json.loads(json.dumps(json_numbers.with_texts(dict(without_unknown_fields(p.doc))), default=str))
        assert isinstance(got, dict)
        return got

    def head(doc: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "podnuma.io/v1", "kind": "Scenario",
            "node": json.loads(json.dumps(node_form, default=str)),
            "kubeletConfig": json.loads(json.dumps(dict(doc), default=str)),
        }

    def scenario(doc: Mapping[str, Any], run: Sequence[_Pod]) -> dict[str, Any]:
        return {**head(doc), "steps": [*({"addPod": pod_form(p)} for p in run), {"reconcile": {}}]}

    def counted(label: str, doc: Mapping[str, Any], cfg: KubeletConfig, run: Sequence[_Pod]) -> None:
        # (each density figure as the report counts it: replay_node's _density)
        ckey = _sig(doc)
        for k, (name, p) in enumerate(_density_pods(run).items(), 1):
            copies, stop = _density_of(machine, mkey, cfg, ckey, p, cache)
            capped = stop is None and copies >= DENSITY_CAP
            form = pod_form(p)
            steps = [{"addPod": _copy_doc(form, i)} for i in range(copies if capped else copies + 1)]
            densities.append(DensityScenario(run=label, index=k, workload=name, kind=p.workload[0],
                                             copies=copies, stop=stop, capped=capped,
                                             scenario={**head(doc), "steps": steps}))

    def starts(cfg: KubeletConfig) -> bool:
        # (a run the kubelet would not start has no density figure)
        try:
            Node(machine, cfg)
        except KubeletStartupError:
            return False
        return True

    out = {baseline: scenario(base_doc, parsed)}
    if density and starts(config):
        counted(baseline, base_doc, config, parsed)
    for w in what_ifs:
        doc = apply_config(base_doc, w)
        try:
            wcfg = _config(doc, cache)
        except PodnumaError:
            continue
        wpods = parsed
        if w.pod_level:
            wpods, _ = _parse_pods([p.doc for p in parsed], wcfg, spec.name, cache)
            wpods = _rewrite(wpods, machine, mkey, config, _sig(base_doc), wcfg, cache,
                             w.shared_pool_cpus)
        out[w.label] = scenario(doc, wpods)
        if density and starts(wcfg):
            dpods = wpods
            if w.gates and not w.pod_level:  # (parsed again under its gates, as the report's run is)
                dpods, _ = _parse_pods([p.doc for p in parsed], wcfg, spec.name, cache)
            counted(w.label, doc, wcfg, dpods)
    return out, densities

"""What a kubelet restart does to the pods running on a node (kubelet v1.37.2).

After a restart the kubelet receives every pod bound to the node from the
API server in one batch and admits them again (``HandlePodAdditions`` in
``pkg/kubelet/kubelet.go``), oldest first: the batch is sorted by
``metadata.creationTimestamp`` (``sliceutils.PodsByCreationTime``; Go's
``sort.Sort`` is not stable, and the API server source lists pods in map
order, so pods created in the same second come in an order the kubelet does
not fix). Pods in a terminal phase are skipped. The resource managers start
from their checkpoints, and each re-admission goes through the same admit
handlers as a new pod:

- a per-container pod regenerates its hints from the assignments it already
  holds and keeps them;
- a pod-level pod (``spec.resources`` with ``PodLevelResourceManagers`` on)
  is allocated afresh in v1.37.2 (kubernetes#140989, fixed after 1.37): it
  may be rejected, or admitted on other CPUs while its old ones stay out of
  the default set and out of every entry -- taken by nobody, and a CPU
  checkpoint that no longer covers every CPU, which the next start refuses.

This module builds that restart as a scenario (the node's checkpoints as
``state``, the running pods' specs as ``state.pods``, one ``addPod`` per pod
in the re-admission order, see ``docs/scenario.md``), runs it through the
engine and reads off, per pod, whether it kept its CPUs and NUMA nodes, moved
or was rejected, and the node's totals after the restart. The scenario is
the evidence: ``podnuma simulate`` and the kubelet oracle replay it to the
same figures.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podnuma.api.pod import Pod
from podnuma.api.qos import QOSClass, with_status_qos
from podnuma.cm.checkpoint import DEFAULT_STATE_DIR
from podnuma.cm.container_manager import DEVICE_CHECKPOINT_FILE
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData
from podnuma.cm.memorymanager.checkpoint import MemoryCheckpointData
from podnuma.cm.memorymanager.state import Block
from podnuma.cm.results import StepResult
from podnuma.errors import InputError, KubeletStartupError
from podnuma.golang import jsonnumbers as json_numbers
from podnuma.golang import rfc3339
from podnuma.inputs.scenario import Scenario, load_scenario_text
from podnuma.inputs.state import checkpoint_pod_uids, read_kubelet_config_mapping
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.scenario.run import RunResult, run_scenario

__all__ = [
    "KEPT",
    "MOVED",
    "REJECTED",
    "UNKNOWN",
    "NodeState",
    "PodOutcome",
    "RestartReport",
    "RunningPod",
    "creation_time",
    "explain_restart",
    "readmission_order",
    "restart",
    "restart_after_document",
    "restart_document",
    "restart_summary",
    "restart_text",
    "restart_scenario",
    "state_after_run",
]

KEPT = "kept"
MOVED = "moved"
REJECTED = "rejected"
UNKNOWN = "unknown"

UPSTREAM_ISSUE = "kubernetes#140989"



@dataclass(frozen=True)
class RunningPod:
    """A pod running on the node before the restart.

    ``manifest``: its spec as the API server holds it; ``None`` for a pod
    known only by its checkpoint entries (it stays on the node in the
    replay, holding what its entries hold, but cannot be re-admitted).
    ``phase``: ``status.phase`` when known (terminal pods are not
    re-admitted).
    """

    uid: str
    ref: str
    manifest: Mapping[str, Any] | None
    phase: str | None = None

    @property
    def created(self) -> str | None:
        meta = self.manifest.get("metadata") if self.manifest is not None else None
        value = meta.get("creationTimestamp") if isinstance(meta, Mapping) else None
        # (a JSON number past the float range, read as its text, is a number:
        # the pod's type check refuses it as it refuses any other number)
        return value if type(value) is str else None

    @property
    def devices(self) -> list[str]:
        """The device-plugin resources its containers request."""
        spec = self.manifest.get("spec") if self.manifest is not None else None
        out: set[str] = set()
        if isinstance(spec, Mapping):
            for key in ("initContainers", "containers"):
                for c in spec.get(key) or []:
                    res = c.get("resources") if isinstance(c, Mapping) else None
                    for part in ("requests", "limits"):
                        got = res.get(part) if isinstance(res, Mapping) else None
                        if isinstance(got, Mapping):
                            out |= {str(k) for k in got if "/" in str(k) and not str(k).startswith("hugepages-")}
        return sorted(out)

    @property
    def pod_level(self) -> bool:
        spec = self.manifest.get("spec") if self.manifest is not None else None
        res = spec.get("resources") if isinstance(spec, Mapping) else None
        return isinstance(res, Mapping) and bool(res)


@dataclass(frozen=True)
class NodeState:
    """A node just before its kubelet restarts: the scenario ``node`` and
    ``kubeletConfig`` mappings, the checkpoint objects (as a scenario's
    ``state:`` takes them) and the running pods in the order they came to
    the node. ``source`` names the input in messages; ``base_dir`` resolves
    the files the node mapping names."""

    node: Mapping[str, Any]
    kubelet_config: Mapping[str, Any]
    cpu_checkpoint: Mapping[str, Any] | None
    memory_checkpoint: Mapping[str, Any] | None
    pods: tuple[RunningPod, ...]
    source: str
    base_dir: Path = field(default_factory=Path.cwd)
    notes: tuple[str, ...] = ()
    #: the device manager's checkpoint object (``state.deviceManager``)
    device_checkpoint: Mapping[str, Any] | None = None
    #: the kubelet's state directory the checkpoints come from: its
    #: refusals of them name their files there
    state_dir: str = DEFAULT_STATE_DIR
    #: the QoS class the API server served for a pod (``status.qosClass``,
    #: by ``NAMESPACE/NAME``), which the kubelet reads (``GetPodQOS``)
    #: where a scenario's pod would compute its class (:func:`with_served_classes`)
    served: Mapping[str, QOSClass] = field(default_factory=dict)


@dataclass(frozen=True)
class Holding:
    """What a pod holds: the pod-level CPU set, the containers' exclusive
    CPUs, the NUMA nodes of its memory blocks."""

    pod_cpus: CPUSet | None
    containers: Mapping[str, CPUSet]
    numa: tuple[int, ...]  # of its CPUs and memory blocks

    @property
    def cpus(self) -> CPUSet:
        out = self.pod_cpus or CPUSet()
        for c in self.containers.values():
            out = out | c
        return out

    def document(self) -> dict[str, Any]:
        return {
            "podCpus": None if self.pod_cpus is None else str(self.pod_cpus),
            "containers": {name: str(c) for name, c in sorted(self.containers.items())},
            "cpus": str(self.cpus),
            "numaNodes": list(self.numa),
        }


@dataclass(frozen=True)
class PodOutcome:
    """One pod's fate at the restart."""

    uid: str
    ref: str
    outcome: str  # kept | moved | rejected | unknown
    pod_level: bool
    step: int | None  # the addPod step of the restart scenario that re-admitted it
    created: str | None
    before: Holding
    after: Holding | None
    reason: str | None = None
    message: str | None = None
    why: str = ""
    # the entries it has after the restart, admitted or not (a rejected
    # pod's entries wait for the CPU manager to collect them)
    entries_after: Holding | None = None

    # CPUs it held before that, after the restart, are in no entry and out
    # of the shared pool: taken by nobody
    left_behind: CPUSet = field(default_factory=CPUSet)


@dataclass(frozen=True)
class Totals:
    cpus: int
    reserved: int
    free: int  # the default set without the reserved CPUs
    held_by_running: int  # exclusive CPUs (pod sets included) of running pods: re-admitted, or unknown
    held_by_rejected: int  # stale entries of pods rejected at the restart
    taken_by_nobody: int  # in no entry and not in the default set
    taken_by_nobody_cpus: str


@dataclass(frozen=True)
class RestartReport:
    state: NodeState
    scenario: dict[str, Any]
    run: RunResult
    pods: tuple[PodOutcome, ...]
    totals: Totals
    next_start: str | None  # the kubelet's refusal to start from the state after, or None
    notes: tuple[str, ...]
    #: the ``--set`` overrides the node ran and restarted with (as written)
    overrides: tuple[str, ...] = ()

    def count(self, outcome: str) -> int:
        return sum(1 for p in self.pods if p.outcome == outcome)

    def counts(self) -> dict[str, int]:
        """How many pods had each outcome (kept, moved, rejected, unknown)."""
        return {outcome: self.count(outcome) for outcome in (KEPT, MOVED, REJECTED, UNKNOWN)}


# --------------------------------------------------------------------------
# the order


def creation_time(pod: RunningPod) -> int:
    """The pod's ``metadata.creationTimestamp`` as the kubelet orders pods
    by it: read as ``metav1.Time`` reads it (Go's RFC 3339 parse, refused
    with Go's reason; :mod:`podnuma.golang.rfc3339`), the moment in seconds
    from the Unix epoch (``metav1.Time`` is written to the second, so the
    kubelet gets no fraction from the API server); none is Go's zero time."""
    text = pod.created
    if text is None:
        return rfc3339.ZERO_TIME
    got = rfc3339.instant(text) if isinstance(text, str) else None
    if got is None:
        why = rfc3339.parse_error(text) if isinstance(text, str) else "not a string"
        raise InputError(
            f"not an RFC 3339 time: {text!r} (pod {pod.ref}): {why}", path="metadata.creationTimestamp"
        ) from None
    return got[0]


def readmission_order(pods: Sequence[RunningPod]) -> tuple[list[RunningPod], list[str]]:
    """The pods in the order the kubelet re-admits them (oldest
    ``creationTimestamp`` first; a pod without one counts as created at
    Go's zero time, i.e. first), with notes on what the kubelet leaves
    open: pods created in the same second (the order given is kept here),
    pods without a creation time, terminal pods (not re-admitted)."""
    notes: list[str] = []
    live = [p for p in pods if p.manifest is not None and p.phase not in ("Succeeded", "Failed")]
    for p in pods:
        if p.manifest is not None and p.phase in ("Succeeded", "Failed"):
            notes.append(f"{p.ref}: phase {p.phase}: the kubelet does not admit a terminal pod again")
    keyed = [(creation_time(p), i, p) for i, p in enumerate(live)]
    keyed.sort(key=lambda t: (t[0], t[1]))
    missing = [p.ref for p in live if p.created is None]
    if missing and len(live) > 1:
        notes.append(
            "no metadata.creationTimestamp for " + ", ".join(missing)
            + ": the order the pods came to the node is used for them (the kubelet sorts by "
            "creation time, and a pod without one would come first)"
        )
    groups: dict[int, list[str]] = {}
    for t, _, p in keyed:
        if p.created is not None:
            groups.setdefault(t, []).append(p.ref)
    for t, refs in groups.items():
        if len(refs) > 1:
            notes.append(
                f"created in the same second ({rfc3339.format_utc(t)}): {', '.join(refs)}; "
                "the kubelet's order for them is not fixed (map order, unstable sort): kept as given"
            )
    return [p for _, _, p in keyed], notes


# --------------------------------------------------------------------------
# the scenario


def _with_uid(manifest: Mapping[str, Any], uid: str) -> dict[str, Any]:
    doc = copy.deepcopy(dict(manifest))
    meta = dict(doc.get("metadata") or {})
    meta["uid"] = uid
    doc["metadata"] = meta
    doc.pop("status", None)
    return doc


def restart_scenario(state: NodeState) -> tuple[dict[str, Any], list[RunningPod], list[str]]:
    """The restart as a scenario document: ``state`` holds the checkpoints
    and the running pods' specs, ``steps`` one ``addPod`` per pod in the
    re-admission order, then one ``removePod`` per pod the kubelet does not
    re-admit (terminal: it holds its entries until the sources are ready and
    the managers collect them). Returns the document, the re-admitted pods
    in step order and the notes on the order."""
    order, notes = readmission_order(state.pods)
    st: dict[str, Any] = {}
    if state.cpu_checkpoint is not None:
        st["cpuManager"] = copy.deepcopy(dict(state.cpu_checkpoint))
    if state.memory_checkpoint is not None:
        st["memoryManager"] = copy.deepcopy(dict(state.memory_checkpoint))
    if state.device_checkpoint is not None:
        st["deviceManager"] = copy.deepcopy(dict(state.device_checkpoint))
    specs = [_with_uid(p.manifest, p.uid) for p in state.pods if p.manifest is not None]
    if specs:
        st["pods"] = specs
    steps: list[dict[str, Any]] = [
        {"addPod": _with_uid(p.manifest, p.uid)} for p in order if p.manifest is not None
    ]
    readmitted = {p.uid for p in order}
    for p in state.pods:
        if p.manifest is not None and p.uid not in readmitted:
            steps.append({"removePod": p.uid})
    doc: dict[str, Any] = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": copy.deepcopy(dict(state.node)),
        "kubeletConfig": copy.deepcopy(dict(state.kubelet_config)),
        "state": st,
        "steps": steps,
    }
    return doc, order, notes


# --------------------------------------------------------------------------
# what the pods hold


def _numa(blocks: Sequence[Block]) -> tuple[int, ...]:
    return tuple(sorted({n for b in blocks for n in b.numa_affinity}))


def _holding(
    uid: str, cpu: CPUCheckpointData | None, memory: MemoryCheckpointData | None, machine: Machine
) -> Holding:
    containers = dict(cpu.entries.get(uid, {})) if cpu is not None else {}
    pod_cpus = cpu.pod_entries.get(uid) if cpu is not None else None
    blocks: list[Block] = []
    if memory is not None:
        blocks += list(memory.pod_entries.get(uid, ()))
        for bl in memory.entries.get(uid, {}).values():
            blocks += list(bl)
    h = Holding(pod_cpus, containers, ())
    topo = machine.topology
    nodes = set(_numa(blocks)) | {topo.cpu_numa_node_id(c) for c in h.cpus if c in topo.cpu_info}
    return Holding(pod_cpus, containers, tuple(sorted(nodes)))


def _load(doc: Mapping[str, Any], name: str, base_dir: Path, state_dir: str = DEFAULT_STATE_DIR) -> Scenario:
    return load_scenario_text(
        json_numbers.dumps(doc, ensure_ascii=False), name=name, base_dir=base_dir, state_dir=state_dir,
        json_only=True,
    )


def with_served_classes(scenario: Scenario, served: Mapping[str, QOSClass]) -> Scenario:
    """``scenario`` whose pods named in ``served`` (by ``NAMESPACE/NAME``)
    carry that class as their ``status.qosClass``, as pods read from the
    API server do: the kubelet's ``GetPodQOS`` answers it, whatever their
    spec gives (a scenario's own pods are created by it, their class
    computed). ``scenario`` itself when none is named."""
    if not served:
        return scenario

    def serve(pod: Pod) -> Pod:
        qos = served.get(pod.ref)
        return pod if qos is None else with_status_qos(pod, qos)

    steps = tuple(s.replace(pod=serve(s.pod)) if s.pod is not None and s.pod.ref in served else s
                  for s in scenario.steps)
    running = tuple(serve(p) for p in scenario.running_pods)
    return scenario.replace(steps=steps, running_pods=running)


def _after_state(run: RunResult, doc: Mapping[str, Any], name: str, base_dir: Path, state_dir: str) -> tuple[
    CPUCheckpointData | None, MemoryCheckpointData | None, str | None
]:
    """The checkpoints after the restart, decoded as the next start decodes
    them, and the kubelet's refusal to start from them (``None``: it
    starts), naming the checkpoint files in ``state_dir``, where the
    restarted kubelet writes them."""
    nxt = {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": doc["node"],
        "kubeletConfig": doc["kubeletConfig"],
        "state": {k: v for k, v in run.checkpoints.items() if k in ("cpuManager", "memoryManager")},
        "steps": [],
    }
    sc = _load(nxt, f"{name} (after the restart)", base_dir, state_dir)
    failure: str | None = None
    try:
        run_scenario(sc, checkpoints=False)
    except KubeletStartupError as e:
        failure = str(getattr(e, "message", e))
    return sc.cpu_checkpoint, sc.memory_checkpoint, failure


def _outcome(
    pod: RunningPod, step: StepResult | None, before: Holding, entries: Holding
) -> PodOutcome:
    after = entries if step is not None and step.admitted else None
    common = {
        "uid": pod.uid, "ref": pod.ref, "pod_level": pod.pod_level, "created": pod.created,
        "before": before, "entries_after": entries,
    }
    if step is None:
        why = (
            "no spec: known only by its checkpoint entries, so not re-admitted here"
            + (" (it holds a pod-level CPU set: a pod-level pod, at risk)" if before.pod_cpus else "")
        )
        return PodOutcome(outcome=UNKNOWN, step=None, after=None, why=why, **common)  # type: ignore[arg-type]
    if not step.admitted:
        return PodOutcome(
            outcome=REJECTED, step=step.index, after=None, reason=step.reason, message=step.message,
            why=(
                "a pod-level pod is allocated afresh on re-admission (" + UPSTREAM_ISSUE + ")"
                if pod.pod_level else "rejected on re-admission"
            ),
            **common,  # type: ignore[arg-type]
        )
    assert after is not None
    same = before.cpus == after.cpus and before.numa == after.numa and (
        before.pod_cpus == after.pod_cpus
    )
    if same:
        why = (
            "no exclusive CPUs or memory to move" if not before.cpus and not before.numa
            else "allocated afresh, and given the same CPUs and NUMA nodes again" if before.pod_cpus
            else "re-admitted on the CPUs and memory it holds"
        )
        return PodOutcome(outcome=KEPT, step=step.index, after=after, why=why, **common)  # type: ignore[arg-type]
    return PodOutcome(
        outcome=MOVED, step=step.index, after=after,
        why=(
            f"a pod-level pod is allocated afresh on re-admission ({UPSTREAM_ISSUE}); its old CPUs stay taken"
            if before.pod_cpus is not None else "re-admitted on other CPUs or NUMA nodes"
        ),
        **common,  # type: ignore[arg-type]
    )


def restart(state: NodeState) -> RestartReport:
    """Restart ``state``'s kubelet: re-admit every running pod and say what
    each keeps; raises ``InputError`` / a start-up failure as ``simulate``
    would on the restart scenario."""
    doc, order, notes = restart_scenario(state)
    name = f"{state.source} (restart)"
    scenario = with_served_classes(_load(doc, name, state.base_dir, state.state_dir), state.served)
    run = run_scenario(scenario)
    cpu_before, mem_before = scenario.cpu_checkpoint, scenario.memory_checkpoint
    cpu_after, mem_after, next_start = _after_state(run, doc, name, state.base_dir, state.state_dir)
    by_uid = {s.pod_uid: s for s in run.steps if s.op == "addPod"}
    outcomes: list[PodOutcome] = []
    for pod in [*order, *[p for p in state.pods if p.manifest is None]]:
        step = by_uid.get(pod.uid)
        before = _holding(pod.uid, cpu_before, mem_before, scenario.machine)
        entries = _holding(pod.uid, cpu_after, mem_after, scenario.machine)
        outcomes.append(_outcome(pod, step, before, entries))
    outcomes += [
        PodOutcome(
            uid=p.uid, ref=p.ref, outcome=UNKNOWN, pod_level=p.pod_level, step=None, created=p.created,
            before=_holding(p.uid, cpu_before, mem_before, scenario.machine), after=None,
            why=f"phase {p.phase}: not admitted again",
        )
        for p in state.pods if p.manifest is not None and p.uid not in {q.uid for q in order}
    ]
    with_devices = [p.ref for p in order if p.devices]
    if with_devices and state.device_checkpoint is None:
        notes.append(
            "devices: the replay starts with no devices allocated (no device manager checkpoint was "
            "given), while the kubelet restores them; the outcomes of "
            + ", ".join(with_devices) + " (they request devices), and of pods aligned with them, may differ "
            "from the kubelet's"
        )
    totals = _totals(run, cpu_after, outcomes)
    nobody = CPUSet.parse(totals.taken_by_nobody_cpus) if totals.taken_by_nobody else CPUSet()
    outcomes = [
        dataclasses.replace(o, left_behind=o.before.cpus & nobody) if o.outcome != UNKNOWN else o
        for o in outcomes
    ]
    if any(o.outcome == REJECTED for o in outcomes) and any(
        o.pod_level and o.step is not None and o.step > min(
            (r.step for r in outcomes if r.outcome == REJECTED and r.step is not None), default=0
        ) for o in outcomes
    ):
        notes.append(
            "a pod-level pod is re-admitted after a rejected one: podnuma (like its scenarios) takes "
            "the kubelet's sources as ready, so the rejected pod's old CPUs are collected at the next "
            "allocation; in the kubelet's first batch after a restart they stay taken until the batch ends"
        )
    return RestartReport(
        state=state, scenario=doc, run=run, pods=tuple(outcomes), totals=totals,
        next_start=next_start, notes=tuple([*state.notes, *notes]),
    )


def _totals(run: RunResult, cpu: CPUCheckpointData | None, outcomes: Sequence[PodOutcome]) -> Totals:
    all_cpus = run.node.cpus
    reserved = run.node.reserved_cpus
    if cpu is None or cpu.policy_name != "static":
        return Totals(all_cpus.size(), reserved.size(), all_cpus.difference(reserved).size(), 0, 0, 0, "")
    rejected = {o.uid for o in outcomes if o.outcome == REJECTED}
    held_running, held_rejected, assigned = CPUSet(), CPUSet(), CPUSet()
    for uid in set(cpu.entries) | set(cpu.pod_entries):
        cs = cpu.pod_entries.get(uid, CPUSet())
        for c in cpu.entries.get(uid, {}).values():
            cs = cs | c
        assigned = assigned | cs
        if uid in rejected:
            held_rejected = held_rejected | cs
        else:  # re-admitted, or running as its entries (unknown: no spec to re-admit)
            held_running = held_running | cs
    nobody = all_cpus.difference(cpu.default_cpuset).difference(assigned)
    return Totals(
        cpus=all_cpus.size(),
        reserved=reserved.size(),
        free=cpu.default_cpuset.difference(reserved).size(),
        held_by_running=held_running.size(),
        held_by_rejected=held_rejected.difference(held_running).size(),
        taken_by_nobody=nobody.size(),
        taken_by_nobody_cpus=str(nobody),
    )


# --------------------------------------------------------------------------
# a scenario's end state


def state_after_run(
    scenario: Scenario, run: RunResult, *, base_dir: Path | None = None
) -> NodeState:
    """The node at the end of ``scenario`` (run as ``run``): the checkpoints
    the engine would have written and the pods still running, with their
    specs, in the order they came to the node."""
    assert scenario.document is not None
    data = scenario.document.data
    base = base_dir if base_dir is not None else Path.cwd()
    running: dict[str, RunningPod] = {}
    raw_state = data.get("state") or {}
    def checked(rp: RunningPod, path: str) -> RunningPod:
        try:
            creation_time(rp)
        except InputError as e:
            raise scenario.input_error(e.at(path)) from None
        return rp

    for i, (pod, raw) in enumerate(zip(scenario.running_pods, raw_state.get("pods") or [], strict=False)):
        running[pod.uid] = checked(RunningPod(pod.uid, pod.ref, raw), f"state.pods[{i}]")
    stand_ins = checkpoint_pod_uids(scenario.cpu_checkpoint, scenario.memory_checkpoint)
    for uid in sorted(stand_ins - set(running)):
        running[uid] = RunningPod(uid, uid, None)
    for step, result in zip(scenario.steps, run.steps, strict=True):
        if step.op == "addPod":
            assert step.pod is not None
            uid = step.pod.uid
            if result.admitted:
                running[uid] = checked(
                    RunningPod(uid, step.pod.ref, data["steps"][step.index]["addPod"]), step.path
                )
            else:
                running.pop(uid, None)
        elif step.op == "removePod":
            running.pop(result.pod_uid, None)
    node = dict(data["node"])
    for key in ("sysfs", "machineInfoFile"):
        value = node.get(key)
        if isinstance(value, str) and not Path(value).is_absolute():
            node[key] = str((base / value).resolve())
    # the configuration the run used (a kubeletConfigFile read, --set applied)
    config: dict[str, Any]
    if scenario.config_document is not None:
        config = copy.deepcopy(dict(scenario.config_document))
    else:
        config = dict(data.get("kubeletConfig") or {})
        if scenario.kubelet_config_file is not None:
            config = read_kubelet_config_mapping(base / scenario.kubelet_config_file)
    return NodeState(
        node=node,
        kubelet_config=config,
        cpu_checkpoint=run.checkpoints.get("cpuManager"),
        memory_checkpoint=run.checkpoints.get("memoryManager"),
        pods=tuple(running.values()),
        source=scenario.name,
        base_dir=base,
        device_checkpoint=_device_object(run.checkpoint_files.get(DEVICE_CHECKPOINT_FILE)),
    )


def _device_object(raw: bytes | None) -> dict[str, Any] | None:
    """The device checkpoint file as a scenario's ``state.deviceManager``
    object (``None``: no file, or not a JSON object: the kubelet would read
    no device state from it)."""
    if raw is None:
        return None
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


# --------------------------------------------------------------------------
# output


def outcome_document(o: PodOutcome) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "pod": o.ref,
        "uid": o.uid,
        "outcome": o.outcome,
        "podLevel": o.pod_level,
        "step": o.step,
        "creationTimestamp": o.created,
        "before": o.before.document(),
        "after": None if o.after is None else o.after.document(),
        "reason": o.reason,
        "message": o.message,
        "why": o.why,
    }
    if o.outcome == REJECTED and o.entries_after is not None:
        doc["entriesAfter"] = o.entries_after.document()
    if o.outcome in (MOVED, REJECTED) and o.left_behind:
        doc["leftBehind"] = str(o.left_behind)
    return doc


def restart_document(r: RestartReport) -> dict[str, Any]:
    """``podnuma restart -o json``."""
    t = r.totals
    return {
        "source": r.state.source,
        "node": {
            "name": r.run.node.name,
            "cpus": str(r.run.node.cpus),
            "reservedCpus": str(r.run.node.reserved_cpus),
        },
        "upstreamIssue": UPSTREAM_ISSUE,
        "pods": [outcome_document(o) for o in r.pods],
        "totals": {
            "pods": len(r.pods),
            **r.counts(),
            "cpus": t.cpus,
            "reservedCpus": t.reserved,
            "freeCpus": t.free,
            "cpusHeldByRunningPods": t.held_by_running,
            "cpusHeldByRejectedPods": t.held_by_rejected,
            "cpusTakenByNobody": t.taken_by_nobody,
            "cpusTakenByNobodyList": t.taken_by_nobody_cpus,
        },
        "nextStart": {"starts": r.next_start is None, "message": r.next_start},
        "notes": list(r.notes),
        **({"set": list(r.overrides)} if r.overrides else {}),
    }


def restart_after_document(
    doc: Mapping[str, Any], *, name: str, base_dir: Path | None = None,
    served: Mapping[str, QOSClass] | None = None,
) -> RestartReport:
    """Run the scenario ``doc`` (a mapping), then restart its kubelet;
    the pods named in ``served`` keep that QoS class through both
    (:func:`with_served_classes`)."""
    base = base_dir if base_dir is not None else Path.cwd()
    classes = dict(served or {})
    scenario = with_served_classes(_load(doc, name, base), classes)
    state = state_after_run(scenario, run_scenario(scenario), base_dir=base)
    return restart(dataclasses.replace(state, served=classes) if classes else state)


def restart_summary(r: RestartReport) -> dict[str, Any]:
    """The restart in a few figures, with the pods that do not keep their
    CPUs (the fleet's per-node what-if)."""
    return {
        **r.counts(),
        "cpusTakenByNobody": r.totals.taken_by_nobody,
        "nextStartFails": r.next_start,
        "pods": [
            {"pod": o.ref, "outcome": o.outcome, "podLevel": o.pod_level,
             "before": str(o.before.cpus), "after": None if o.after is None else str(o.after.cpus),
             "reason": o.reason, "message": o.message,
             **({"leftBehind": str(o.left_behind)} if o.left_behind else {})}
            for o in r.pods if o.outcome in (MOVED, REJECTED)
        ],
    }


def explain_restart(scenario: Scenario, explained: Sequence[str]) -> dict[str, Any] | None:
    """``explain``'s restart section, when it applies: the scenario starts
    from checkpoints (its pods are restored pods), or a pod explained
    (``explained``: pod UIDs) has pod-level resources. The scenario is
    restarted after its last step (as ``podnuma restart`` does) and the
    explained pods' outcomes are given; ``None`` when it does not apply."""
    assert scenario.document is not None
    data = scenario.document.data
    restored = scenario.cpu_checkpoint is not None or scenario.memory_checkpoint is not None
    wanted = set(explained)
    pod_level = sorted({
        s.pod.ref for s in scenario.steps
        if s.op == "addPod" and s.pod is not None and s.pod.uid in wanted
        and RunningPod(s.pod.uid, s.pod.ref, data["steps"][s.index]["addPod"]).pod_level
    })
    if not restored and not pod_level:
        return None
    why = []
    if restored:
        why.append("the scenario starts from checkpoints: its pods run as after a kubelet restart")
    if pod_level:
        why.append(f"pod-level pod(s) {', '.join(pod_level)}: allocated afresh when re-admitted ({UPSTREAM_ISSUE})")
    try:
        report = restart(state_after_run(scenario, run_scenario(scenario), base_dir=scenario.base_dir))
    except (InputError, KubeletStartupError) as e:
        return {"applies": why, "error": f"the restart could not be replayed: {e}"}
    doc = restart_document(report)
    doc["applies"] = why
    mine = [p for p in doc["pods"] if p["uid"] in wanted]
    if not mine:
        doc["note"] = "the pods explained are not running after the last step: the pods that are"
    doc["pods"] = mine or doc["pods"]
    doc["replay"] = "podnuma restart SCENARIO --as-scenario FILE writes the restart; podnuma simulate FILE replays it"
    return doc


def restart_text(section: Mapping[str, Any]) -> list[str]:
    """``explain``'s restart section for people."""
    lines = ["", "after a kubelet restart (v1.37.2): " + "; ".join(section.get("applies", []))]
    if "error" in section:
        return [*lines, f"  {section['error']}"]
    if "note" in section:
        lines.append(f"  ({section['note']})")
    for p in section["pods"]:
        before, after = p["before"]["cpus"] or "shared pool", (p["after"] or {}).get("cpus")
        if p["outcome"] == KEPT:
            lines.append(f"  {p['pod']}: kept ({before})")
        elif p["outcome"] == MOVED:
            lines.append(f"  {p['pod']}: moved {before} -> {after}; CPUs {p.get('leftBehind', '')} taken by nobody")
        elif p["outcome"] == REJECTED:
            lines.append(f"  {p['pod']}: rejected: {p['reason']}: {p['message']}")
        else:
            lines.append(f"  {p['pod']}: {p['why']}")
    ns = section["nextStart"]
    if not ns["starts"]:
        lines.append(f"  the next kubelet start fails: {ns['message']}")
    lines.append(f"  ({section['replay']})")
    return lines

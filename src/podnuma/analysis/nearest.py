"""The nearest admissible configuration of a rejected pod.

The scenario is re-run up to the rejected step with one change at a time,
in order of how small the change is (:data:`FAMILY_ORDER`):

1. ``container``: the resources of the container the rejection is due to
   (a 1-CPU sidecar breaking ``full-pcpus-only``: rounded to a whole core,
   or moved to the shared pool with a CPU that is not a whole number while
   requests stay equal to limits, so the pod stays Guaranteed); for a
   pod-level pod whose exclusive containers leave its shared pool empty,
   a larger pod budget;
2. ``option``: one CPU manager (or topology manager) policy option off;
3. ``podLevel``: the pod-level rewrite ``podnuma advise`` writes
   (:func:`pod_level_form`: ``spec.resources`` with the sidecars in the
   pod's shared pool; with the two feature gates turned on when they are
   off);
4. ``policy``: a looser topology policy, the other scope;
5. ``fewer``: fewer CPUs for the biggest exclusive container (or the pod
   budget); less memory for the container the memory manager refused;
6. ``removal``: one running pod removed first.

Each outcome is reported from the re-run's own records, every run in order
(``SearchReport.tried_outcomes``), and the first admitted one is the
nearest. Every change can be written as a scenario
(:func:`candidate_scenario`) that ``podnuma simulate`` replays to the same
admission and, after it, the same side effects on the later steps
compared. The search is capped (``MAX_RERUNS`` runs per rejection).
"""

from __future__ import annotations

import copy
import dataclasses
import io
import pickle
import time
import types
import weakref
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podnuma.analysis.rewrite import Rewrite, has_pod_level_resources, served_manifest
from podnuma.api.featuregates import FeatureGates
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import Container, Pod
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.quantity import Quantity, parse_quantity
from podnuma.cm.container_manager import Node
from podnuma.cm.results import StepResult
from podnuma.cm.topologymanager.manager import SCOPE_CONTAINER, SCOPE_POD
from podnuma.cm.topologymanager.policy import (
    POLICY_BEST_EFFORT,
    POLICY_NONE,
    POLICY_RESTRICTED,
    POLICY_SINGLE_NUMA_NODE,
)
from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.scenario import Scenario, Step
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.scenario.run import RunResult, play_step, run_scenario, start_node
from podnuma.units import format_bytes as _size
from podnuma.units import format_nodes as _nodes

__all__ = [
    "CONFIG_KINDS",
    "FAMILY_ORDER",
    "MAX_RERUNS",
    "NodeSnapshot",
    "Outcome",
    "REPLAY_STEPS",
    "Search",
    "SearchReport",
    "SideEffect",
    "Variation",
    "apply_variation",
    "candidate_scenario",
    "candidate_variations",
    "copy_node",
    "nearest_admissible",
    "numa_of_cpus",
    "outcome_summary",
    "planned_runs",
    "position",
    "run_variation",
    "search_nearest",
    "shared_objects",
    "snapshot_steps",
]

MAX_RERUNS = 30

#: the families of changes, smallest first (see the module docstring)
FAMILY_ORDER = ("container", "option", "podLevel", "policy", "fewer", "removal")
#: the kinds of change that change the kubelet configuration (the whole
#: scenario is re-run with it)
CONFIG_KINDS = ("topologyPolicy", "topologyScope", "cpuOption", "topologyOption")
#: the kinds of change that change the pod of the rejected step
POD_KINDS = ("containerCPUs", "fewerCPUs", "podBudget", "fewerPodCPUs", "fewerMemory", "podLevel")
#: the feature gates the pod-level rewrite needs
POD_LEVEL_GATES = ("PodLevelResources", "PodLevelResourceManagers")


def numa_of_cpus(machine: Machine, cpus: CPUSet) -> list[int]:
    info = machine.topology.cpu_info
    return sorted({info[c].numa_node for c in cpus.list() if c in info})



@dataclass(frozen=True)
class Variation:
    """One change to try on the scenario, up to the rejected step.

    ``kind``: ``containerCPUs`` (``container``'s CPU request and limit set
    to ``value``, a quantity), ``cpuOption`` / ``topologyOption`` (the CPU /
    topology manager policy option ``value`` off), ``podLevel`` (the
    pod-level rewrite; ``amount``: the pod shared pool's CPUs, 0 for the
    rewrite's own budget; ``value`` ``gates``: the two feature gates turned
    on too), ``topologyPolicy`` (``value`` = policy), ``topologyScope``
    (``value`` = scope), ``fewerCPUs`` (``container``, ``amount`` CPUs less),
    ``podBudget`` (``amount`` CPUs more on the pod-level budget),
    ``fewerPodCPUs`` (``amount`` CPUs less on it), ``fewerMemory``
    (``container``'s memory set to ``value``, ``memory`` bytes less),
    ``removePod`` (``value``
    = the running pod's UID, ``pod`` its ref). Its ``family`` is one of
    :data:`FAMILY_ORDER`.
    """

    kind: str
    description: str
    value: str | None = None
    container: str | None = None
    amount: int = 0
    pod: str | None = None
    base: int | None = None  # the CPU count before the change (graded kinds)
    memory: int = 0  # podBudget: bytes added to the pod's memory budget too

    @property
    def family(self) -> str:
        return _FAMILY_OF.get(self.kind, "")

    def to_json(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "kind": self.kind,
            "change": self.description,
            "value": self.value,
            "container": self.container,
            "amount": self.amount or None,
            "pod": self.pod,
            "originalCpus": self.base,
            "memory": self.memory or None,
        }


@dataclass(frozen=True)
class SideEffect:
    """Another pod whose admission changes with the suggestion."""

    step: int
    pod: str
    was: str  # "admitted", "rejected (REASON)"
    now: str

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "pod": self.pod, "was": self.was, "now": self.now}

    def text(self) -> str:
        return f"{self.pod} (step {self.step}) {self.now} instead of {self.was}"


_FAMILY_OF = {
    "containerCPUs": "container", "podBudget": "container", "cpuOption": "option",
    "topologyOption": "option", "podLevel": "podLevel", "topologyPolicy": "policy",
    "topologyScope": "policy", "fewerCPUs": "fewer", "fewerPodCPUs": "fewer", "fewerMemory": "fewer",
    "removePod": "removal",
}


def _verdict(step: StepResult | None) -> str:
    if step is None:
        return "not applicable"
    if step.admitted:
        return "admitted"
    return f"rejected ({step.reason})"


@dataclass(frozen=True)
class Outcome:
    variation: Variation
    admitted: bool | None  # None: the variation could not run
    reason: str | None = None
    message: str | None = None
    stage: str | None = None
    numa_nodes: tuple[int, ...] | None = None
    cpus: str | None = None
    error: str | None = None
    # what the change does to the other pods: (step index, pod, what)
    side_effects: tuple[SideEffect, ...] = ()
    # how far the side effects were followed: the later steps replayed
    # (None: every step of the scenario was re-run)
    checked_steps: int | None = None
    # the last step the re-run played (None: it stopped at the changed
    # step), and the steps that no longer applied in it (a removal of a pod
    # that is not running then): what the scenario replaying it holds
    through: int | None = None
    gone: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = self.variation.to_json()
        out.update({
            "admitted": self.admitted,
            "reason": self.reason,
            "message": self.message,
            "stage": self.stage,
            "numaNodes": None if self.numa_nodes is None else list(self.numa_nodes),
            "cpus": self.cpus,
            "error": self.error,
            "sideEffects": [e.to_json() for e in self.side_effects],
            "sideEffectsCheckedSteps": self.checked_steps,
            "summary": outcome_summary(self),
        })
        return out


def position(scenario: Scenario, index: int) -> int:
    for i, s in enumerate(scenario.steps):
        if s.index == index:
            return i
    raise KeyError(index)


def _set_cpu(res: Mapping[str, Quantity], value: int) -> dict[str, Quantity]:
    out = dict(res)
    if "cpu" in out:
        out["cpu"] = Quantity.from_int(value)
    return out


def _set_cpu_text(res: Mapping[str, Quantity], value: str) -> dict[str, Quantity]:
    out = dict(res)
    if "cpu" in out:
        out["cpu"] = parse_quantity(value)
    return out


def _set_memory(res: Mapping[str, Quantity], value: str) -> dict[str, Quantity]:
    out = dict(res)
    if "memory" in out:
        out["memory"] = parse_quantity(value)
    return out


def _with_container(
    pod: Pod, name: str, resources: Callable[[Mapping[str, Quantity]], dict[str, Quantity]]
) -> Pod:
    """``pod`` with the requests and limits of container ``name`` (init or
    app) passed through ``resources``."""

    def change(c: Container) -> Container:
        if c.name != name:
            return c
        return c.replace(requests=resources(c.requests), limits=resources(c.limits))

    return pod.replace(
        init_containers=tuple(change(c) for c in pod.init_containers),
        containers=tuple(change(c) for c in pod.containers),
    )


def _modify_pod(pod: Pod, variation: Variation) -> Pod:
    name = variation.container
    if variation.kind == "fewerMemory" and name is not None:
        memory = variation.value
        assert memory is not None
        return _with_container(pod, name, lambda r: _set_memory(r, memory))
    if variation.kind == "containerCPUs" and name is not None:
        value = variation.value
        assert value is not None
        return _with_container(pod, name, lambda r: _set_cpu_text(r, value))
    if variation.kind == "fewerCPUs" and name is not None:
        container = next(c for c in (*pod.init_containers, *pod.containers) if c.name == name)
        cpu = container.requests.get("cpu") or container.limits.get("cpu")
        assert cpu is not None
        new = cpu.value() - variation.amount
        return _with_container(pod, name, lambda r: _set_cpu(r, new))
    if variation.kind in ("podBudget", "fewerPodCPUs") and pod.resources is not None:
        cpu = pod.resources.requests.get("cpu") or pod.resources.limits.get("cpu")
        assert cpu is not None
        delta = variation.amount if variation.kind == "podBudget" else -variation.amount
        new = cpu.value() + delta
        requests = _set_cpu(pod.resources.requests, new)
        limits = _set_cpu(pod.resources.limits, new)
        if variation.memory:
            extra = Quantity.from_int(variation.memory, binary=True)
            for res_map in (requests, limits):
                if "memory" in res_map:
                    res_map["memory"] = res_map["memory"] + extra
        res = pod.resources.replace(requests=requests, limits=limits)
        return pod.replace(resources=res)
    return pod


def varied_config(config: KubeletConfig, variation: Variation) -> KubeletConfig:
    """The kubelet configuration with the change applied (unchanged for a
    change to the pod only)."""
    v = variation
    if v.kind == "topologyPolicy" and v.value is not None:
        return config.replace(topology_manager_policy=v.value)
    if v.kind == "topologyScope" and v.value is not None:
        return config.replace(topology_manager_scope=v.value)
    if v.kind == "cpuOption":
        opts = {k: x for k, x in config.cpu_manager_policy_options.items() if k != v.value}
        return config.replace(cpu_manager_policy_options=opts)
    if v.kind == "topologyOption":
        opts = {k: x for k, x in config.topology_manager_policy_options.items() if k != v.value}
        return config.replace(topology_manager_policy_options=opts)
    if v.kind == "podLevel" and v.value == "gates":
        gates = config.feature_gates.explicit()
        gates.update(dict.fromkeys(POD_LEVEL_GATES, True))
        return config.replace(feature_gates=FeatureGates.from_mapping(gates))
    return config


def _changes_config(variation: Variation) -> bool:
    return variation.kind in CONFIG_KINDS or (variation.kind == "podLevel" and variation.value == "gates")


def step_manifest(scenario: Scenario, step_index: int) -> Mapping[str, Any] | None:
    """The pod manifest of the ``addPod`` step as the scenario file gives
    it (``None`` when the scenario was not read from a document)."""
    doc = scenario.document
    if doc is None or not isinstance(doc.data, Mapping):
        return None
    steps = doc.data.get("steps")
    if not isinstance(steps, list) or not 0 <= step_index < len(steps):
        return None
    raw = steps[step_index]
    body = raw.get("addPod") if isinstance(raw, Mapping) else None
    return body if isinstance(body, Mapping) else None


def pod_level_form(manifest: Mapping[str, Any], gates: FeatureGates, shared_pool_cpus: int | None) -> Rewrite:
    """The pod-level rewrite ``podnuma advise`` writes (its default
    strategy, :func:`podnuma.analysis.advise.pod_level_form`) of the pod
    ``manifest`` as the API server stores it, with a pod shared pool of
    ``shared_pool_cpus`` CPUs (None: the pod's own CPU request as the
    budget); ``gates``: the feature gates the pod is read under."""
    from podnuma.analysis.advise import pod_level_form as advised  # (the search only)

    served = served_manifest(manifest)
    # (a scenario's pod: its ephemeral containers were added after the create)
    return advised(served, parse_pod(served, gates=gates, sort_keys=True, on_create=False),
                   shared_pool_cpus=shared_pool_cpus)


def _set_manifest_cpu(container: dict[str, Any], value: str, resource: str = "cpu") -> None:
    res = container.get("resources")
    if not isinstance(res, dict):
        return
    for part in ("requests", "limits"):
        section = res.get(part)
        if isinstance(section, dict) and resource in section:
            section[resource] = value


def candidate_manifest(
    scenario: Scenario, step_index: int, variation: Variation
) -> dict[str, Any] | None:
    """The ``addPod`` manifest with the change applied (``None`` when the
    change leaves the pod as it is, or the manifest is not known)."""
    v = variation
    if v.kind not in POD_KINDS:
        return None
    manifest = step_manifest(scenario, step_index)
    target = scenario.steps[position(scenario, step_index)]
    if manifest is None or target.pod is None:
        return None
    if v.kind == "podLevel":
        gates = varied_config(scenario.config, v).feature_gates
        return pod_level_form(manifest, gates, v.amount or None).manifest
    out = copy.deepcopy(dict(manifest))
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out
    if v.kind == "fewerMemory":
        assert v.value is not None
        for key in ("initContainers", "containers"):
            for c in spec.get(key) or ():
                if isinstance(c, dict) and c.get("name") == v.container:
                    _set_manifest_cpu(c, v.value, "memory")
        return out
    if v.kind in ("containerCPUs", "fewerCPUs"):
        if v.kind == "containerCPUs":
            assert v.value is not None
            value = v.value
        else:
            value = str((v.base or 0) - v.amount)
        for key in ("initContainers", "containers"):
            for c in spec.get(key) or ():
                if isinstance(c, dict) and c.get("name") == v.container:
                    _set_manifest_cpu(c, value)
        return out
    # the pod budget
    new = (v.base or 0) + (v.amount if v.kind == "podBudget" else -v.amount)
    _set_manifest_cpu(spec, str(new))
    res = spec.get("resources")
    if v.memory and isinstance(res, dict):
        extra = Quantity.from_int(v.memory, binary=True)
        for part in ("requests", "limits"):
            section = res.get(part)
            if isinstance(section, dict) and "memory" in section:
                section["memory"] = str(parse_quantity(str(section["memory"])) + extra)
    return out


def candidate_pod(scenario: Scenario, step_index: int, pod: Pod, variation: Variation) -> Pod:
    """The pod of the rejected step with the change applied."""
    if variation.kind == "podLevel":
        manifest = candidate_manifest(scenario, step_index, variation)
        if manifest is None:
            raise ValueError("the pod's manifest is not known")
        return parse_pod(manifest, gates=varied_config(scenario.config, variation).feature_gates, sort_keys=True,
                         on_create=False)
    return _modify_pod(pod, variation)


def apply_variation(scenario: Scenario, step_index: int, variation: Variation) -> Scenario:
    """The scenario up to (and including) step ``step_index`` with the
    change applied; the changed step is the last one."""
    pos = position(scenario, step_index)
    steps = list(scenario.steps[: pos + 1])
    config = varied_config(scenario.config, variation)
    target = steps[-1]
    if variation.kind in CONFIG_KINDS:
        pass
    elif variation.kind in POD_KINDS:
        assert target.pod is not None
        pod = candidate_pod(scenario, step_index, target.pod, variation)
        steps[-1] = target.replace(pod=pod)
    elif variation.kind == "removePod" and variation.value is not None:
        removal = Step(target.index, "removePod", target.path, ref=variation.value)
        steps.insert(len(steps) - 1, removal)
    else:
        raise ValueError(f"unknown variation {variation.kind!r}")
    return scenario.replace(config=config, steps=tuple(steps))


#: the fields of a scenario naming a file, relative to the scenario's directory
_PATH_FIELDS = (
    ("node", "sysfs"), ("node", "machineInfoFile"), ("state", "cpuManagerFile"),
    ("state", "memoryManagerFile"),
)


def _config_patch(cfg: dict[str, Any], variation: Variation) -> None:
    v = variation
    if v.kind == "topologyPolicy":
        cfg["topologyManagerPolicy"] = v.value
    elif v.kind == "topologyScope":
        cfg["topologyManagerScope"] = v.value
    elif v.kind in ("cpuOption", "topologyOption"):
        key = "cpuManagerPolicyOptions" if v.kind == "cpuOption" else "topologyManagerPolicyOptions"
        opts = dict(cfg.get(key) or {})
        opts.pop(str(v.value), None)
        if opts:
            cfg[key] = opts
        else:
            cfg.pop(key, None)
    elif v.kind == "podLevel" and v.value == "gates":
        gates = dict(cfg.get("featureGates") or {})
        gates.update(dict.fromkeys(POD_LEVEL_GATES, True))
        cfg["featureGates"] = gates


def candidate_scenario(
    scenario: Scenario,
    step_index: int,
    variation: Variation,
    *,
    config_doc: Mapping[str, Any] | None = None,
    base: Mapping[str, Any] | None = None,
    through: int | None = None,
    gone: Collection[int] = (),
) -> dict[str, Any]:
    """The scenario that replays ``variation``: the scenario's own document
    up to the rejected step, with the change made where it belongs (the
    pod's manifest, the kubelet configuration, a ``removePod`` step before
    it), and on to step ``through`` (the last step the search's re-run
    played, :attr:`Outcome.through`: the later steps its side effects rest
    on) without the steps ``gone`` (:attr:`Outcome.gone`: those that no
    longer apply with the change, a removal of a pod not running then,
    which a replay would refuse). ``config_doc``: the KubeletConfiguration
    read from the scenario's ``kubeletConfigFile`` (needed when the change
    is to the configuration: it is then written inline). Relative file references are made absolute
    from the scenario's directory so the scenario replays from anywhere.
    ``base``: the scenario document to start from instead of the
    scenario's own (e.g. the scenario as it ran, its configuration inline).
    Raises ``ValueError`` when the scenario has no document."""
    doc = scenario.document
    if base is None and (doc is None or not isinstance(doc.data, Mapping)):
        raise ValueError("the scenario was not read from a document")
    out: dict[str, Any] = copy.deepcopy(dict(base if base is not None else doc.data))  # type: ignore[union-attr]
    root = Path(scenario.base_dir)
    for section, key in _PATH_FIELDS:
        part = out.get(section)
        if isinstance(part, dict) and isinstance(part.get(key), str):
            ref = Path(part[key])
            if not ref.is_absolute():
                part[key] = str((root / ref).resolve())
    if isinstance(out.get("kubeletConfigFile"), str):
        ref = Path(out["kubeletConfigFile"])
        if not ref.is_absolute():
            out["kubeletConfigFile"] = str((root / ref).resolve())
    if _changes_config(variation):
        if "kubeletConfigFile" in out:
            if config_doc is None:
                raise ValueError("the kubelet configuration file was not read")
            cfg = copy.deepcopy(dict(config_doc))
            del out["kubeletConfigFile"]
        else:
            cfg = copy.deepcopy(dict(out.get("kubeletConfig") or {}))
        _config_patch(cfg, variation)
        out["kubeletConfig"] = cfg
    last = step_index if through is None else max(through, step_index)
    manifest = candidate_manifest(scenario, step_index, variation)
    steps: list[Any] = []
    for i, raw in enumerate(list(out.get("steps") or [])[: last + 1]):
        if i in gone and i != step_index:
            continue
        if i == step_index:
            if variation.kind == "removePod":
                steps.append({"removePod": variation.value})
            if manifest is not None:
                raw = {"addPod": manifest}
        steps.append(raw)
    out["steps"] = steps
    return out


def _placement(step: StepResult, machine: Machine) -> tuple[tuple[int, ...] | None, str | None]:
    """NUMA nodes the admitted pod's pinned resources landed on, and its
    exclusive/pod CPUs (``None`` when it only uses the shared pools)."""
    nodes: set[int] = set()
    cpus = CPUSet()
    if step.pod_allocation is not None:
        cpus = cpus | step.pod_allocation.cpus
    for c in step.containers:
        if c.isolation != "host":
            cpus = cpus | c.cpus
        for b in c.memory:
            nodes.update(b.numa_nodes)
        for res, ids in c.devices.items():
            for d in machine.devices.get(res, ()):
                if d.id in ids:
                    nodes.update(d.numa_nodes)
    nodes.update(numa_of_cpus(machine, cpus))
    if not nodes:
        return None, None
    return tuple(sorted(nodes)), (str(cpus) if cpus else None)


def run_variation(scenario: Scenario, step_index: int, variation: Variation) -> Outcome:
    """Re-run the scenario up to the step with ``variation`` applied."""
    try:
        result = run_scenario(apply_variation(scenario, step_index, variation))
    except (InputError, KubeletStartupError, ValueError, AssertionError) as e:
        return Outcome(variation, None, error=str(e))
    last = result.steps[-1]
    if last.admitted:
        nodes, cpus = _placement(last, scenario.machine)
        return Outcome(variation, True, numa_nodes=nodes, cpus=cpus)
    return Outcome(
        variation, False, reason=last.reason, message=last.message, stage=last.failed_stage
    )


def _running_before(scenario: Scenario, result: RunResult, step_index: int) -> list[tuple[str, str, int]]:
    """(uid, ref, exclusive CPUs held) of the pods running when the step came."""
    running: dict[str, tuple[str, int]] = {}
    for uid in _checkpoint_uids(scenario):
        running[uid] = (uid, 0)
    for s in result.steps:
        if s.index >= step_index:
            break
        if s.op == "addPod" and s.admitted:
            held = CPUSet()
            if s.pod_allocation is not None:
                held = held | s.pod_allocation.cpus
            for c in s.containers:
                if c.isolation != "host":
                    held = held | c.cpus
            running[s.pod_uid] = (s.pod, held.size())
        elif s.op == "removePod":
            running.pop(s.pod_uid, None)
    return [(uid, ref, held) for uid, (ref, held) in running.items()]


def _checkpoint_uids(scenario: Scenario) -> list[str]:
    uids: set[str] = set()
    for ck in (scenario.cpu_checkpoint, scenario.memory_checkpoint):
        if ck is None:
            continue
        for attr in ("entries", "pod_entries"):
            value = getattr(ck, attr, None)
            if isinstance(value, Mapping):
                uids.update(str(k) for k in value)
    return sorted(uids)


def _cpu_count(res: Mapping[str, Quantity]) -> int | None:
    cpu = res.get("cpu")
    if cpu is None or cpu.is_zero() or cpu.milli_value() % 1000:
        return None
    return cpu.value()


def _biggest_exclusive(pod: Pod) -> tuple[str, int] | None:
    """The container with the most whole CPUs requested (= limit)."""
    best: tuple[str, int] | None = None
    for c in (*pod.init_containers, *pod.containers):
        n = _cpu_count(c.requests)
        lim = c.limits.get("cpu")
        if n is None or n < 2 or lim is None or lim != c.requests.get("cpu"):
            continue
        if best is None or n > best[1]:
            best = (c.name, n)
    return best


_TRUE_TEXTS = ("1", "t", "T", "true", "TRUE", "True")


def _exclusive_cpus(c: Container) -> int | None:
    """The whole CPUs container ``c`` asks for with request = limit (what
    makes it eligible for exclusive CPUs), else ``None``."""
    n = _cpu_count(c.requests)
    lim = c.limits.get("cpu")
    if n is None or lim is None or lim != c.requests.get("cpu"):
        return None
    return n


def _at_fault(pod: Pod, step: StepResult, machine: Machine) -> list[tuple[str, int]]:
    """(name, whole CPUs) of the containers the rejection is due to: the one
    the kubelet names, or, for an SMT alignment error on the pod, each
    exclusive container whose CPUs do not fill whole cores."""
    if step.failed_stage not in ("topology", "allocate:cpu"):
        return []
    containers = {c.name: c for c in pod.all_containers()}
    names: list[str] = []
    if step.failed_container is not None:
        names = [step.failed_container]
    elif step.reason == "SMTAlignmentError":
        per_core = machine.topology.cpus_per_core() or 1
        names = [
            c.name for c in pod.all_containers()
            if (_exclusive_cpus(c) or 0) % per_core
        ]
    out: list[tuple[str, int]] = []
    for name in names:
        c = containers.get(name)
        n = _exclusive_cpus(c) if c is not None else None
        if n is not None:
            out.append((name, n))
    return out


def _container_family(pod: Pod, step: StepResult, machine: Machine) -> list[Variation]:
    """The container at fault's own resources: rounded to whole cores (an
    SMT alignment error), then a CPU that is not a whole number (the
    container leaves the exclusive CPUs for a shared pool; requests stay
    equal to limits, so the pod's QoS class is kept)."""
    per_core = machine.topology.cpus_per_core() or 1
    fam: list[Variation] = []
    for name, n in _at_fault(pod, step, machine):
        if step.reason == "SMTAlignmentError" and per_core > 1 and n % per_core:
            up = n + per_core - n % per_core
            fam.append(Variation(
                "containerCPUs", f"container {name} cpu {up} instead of {n} (rounded up to whole cores)",
                value=str(up), container=name, base=n,
            ))
            down = n - n % per_core
            if down:
                fam.append(Variation(
                    "containerCPUs",
                    f"container {name} cpu {down} instead of {n} (rounded down to whole cores)",
                    value=str(down), container=name, base=n,
                ))
        milli = n * 1000 - 100
        fam.append(Variation(
            "containerCPUs",
            f"container {name} cpu {milli}m instead of {n} (on a shared pool; the pod stays Guaranteed)",
            value=f"{milli}m", container=name, base=n,
        ))
    return fam


def _option_family(config: KubeletConfig) -> list[Variation]:
    """Each CPU manager and topology manager policy option that is on,
    turned off alone."""
    fam: list[Variation] = []
    if config.cpu_manager_policy == "static":
        for name, value in config.cpu_manager_policy_options.items():
            if value.strip() in _TRUE_TEXTS:
                fam.append(Variation("cpuOption", f"cpuManagerPolicyOptions {name} off", value=name))
    if config.topology_manager_policy != POLICY_NONE:
        for name, value in config.topology_manager_policy_options.items():
            if value.strip() in _TRUE_TEXTS:
                fam.append(Variation("topologyOption", f"topologyManagerPolicyOptions {name} off", value=name))
    return fam


def _pod_level_family(scenario: Scenario, step: StepResult, pod: Pod) -> list[Variation]:
    """The pod-level rewrite, when the pod is per-container and the rewrite
    moves at least one container to the pod's shared pool: with the
    rewrite's own budget, then with a pod shared pool of 1 and 2 CPUs (when
    that budget differs); the two feature gates turned on when they are off.
    The rewrite is the one ``podnuma advise`` writes (:func:`pod_level_form`):
    a moved container keeps its own memory request and limit."""
    gates = scenario.config.feature_gates
    manifest = step_manifest(scenario, step.index)
    if manifest is None or len(pod.all_containers()) < 2 or has_pod_level_resources(manifest):
        return []
    off = [g for g in POD_LEVEL_GATES if not gates.enabled(g)]
    value = "gates" if off else None
    with_gates = f" with feature gate{'s' if len(off) > 1 else ''} {' and '.join(off)} on" if off else ""
    fam: list[Variation] = []
    seen: set[str] = set()
    for pool in (0, 1, 2):
        v = Variation("podLevel", "", value=value, amount=pool)
        try:
            rw = pod_level_form(manifest, varied_config(scenario.config, v).feature_gates, pool or None)
        except (InputError, ValueError):
            return []
        shared = [
            p.name + (f" (keeping its {', '.join(p.kept)})" if p.kept else "")
            for p in rw.containers if p.role == "shared"
        ]
        if not shared:
            return []
        budget = rw.budget.get("requests", {})
        key = repr(sorted(budget.items()))
        if key in seen:
            continue
        seen.add(key)
        cpu = budget.get("cpu", "-")
        memory = budget.get("memory", "-")
        sized = f" with a pod shared pool of {pool} CPU(s)" if pool else ""
        text = (
            f"pod-level rewrite{sized}: spec.resources cpu {cpu}, memory {memory}; "
            f"{', '.join(shared)} on the pod's shared pool{with_gates}"
        )
        fam.append(dataclasses.replace(v, description=text))
    return fam


_MI = 1 << 20


def _memory_family(pod: Pod, step: StepResult) -> list[Variation]:
    """Less memory for the container the memory manager refused (or, when
    the node's allocatable memory is short, the one asking for the most):
    3/4, 1/2, then 1/4 of its request, in whole Mi."""
    if step.failed_stage != "allocate:memory" and step.reason != "OutOfmemory":
        return []
    containers = pod.all_containers()
    chosen = [c for c in containers if c.name == step.failed_container]
    if not chosen:
        chosen = sorted(
            (c for c in containers if c.requests.get("memory") is not None),
            key=lambda c: -c.requests["memory"].value(),
        )[:1]
    fam: list[Variation] = []
    for c in chosen:
        req = c.requests.get("memory")
        if req is None or req.value() < 2 * _MI:
            continue
        n = req.value()
        for num, den in ((3, 4), (1, 2), (1, 4)):
            new = n * num // den // _MI * _MI
            if new <= 0 or new >= n:
                continue
            text = str(Quantity.from_int(new, binary=True))
            fam.append(Variation(
                "fewerMemory", f"container {c.name} memory {text} instead of {req}",
                value=text, container=c.name, memory=n - new,
            ))
    return fam


def candidate_variations(
    scenario: Scenario, result: RunResult, step: StepResult
) -> list[list[Variation]]:
    """The changes worth trying for a rejected step, in families, smallest
    change first (:data:`FAMILY_ORDER`); within a graded family (the
    container's resources, the pod-level rewrite's shared pool, fewer CPUs,
    a larger budget) the first admitted one is the nearest."""
    config = scenario.config
    pod = scenario.steps[position(scenario, step.index)].pod
    families: list[list[Variation]] = []
    policy = config.topology_manager_policy
    allocatable_only = step.failed_stage == "nodeAllocatable"
    machine = scenario.machine
    # 1. the container at fault, or the pod budget that leaves its shared pool empty
    if pod is not None:
        fam = _container_family(pod, step, machine)
        if fam:
            families.append(fam)
    if pod is not None and pod.resources is not None and _cpu_count(pod.resources.requests):
        budget = _cpu_count(pod.resources.requests) or 0
        # The empty-pod-shared-pool check also hides behind a TopologyAffinityError:
        # the CPU manager then returns no pod hints and restricted/single-numa-node
        # refuse the merge before AllocatePod can say why.
        pod_scope_merge = step.failed_stage == "topology" and step.failed_container is None
        if step.reason == "EmptyPodSharedPoolError" or pod_scope_merge:
            fam = [Variation("podBudget", f"pod CPU budget {budget + 1} (1 more)", amount=1, base=budget)]
            if "memory" in pod.resources.requests:
                # The memory manager runs the same empty-pool check on the memory budget.
                fam.append(Variation(
                    "podBudget", f"pod CPU budget {budget + 1} (1 more) and 1Gi more memory",
                    amount=1, base=budget, memory=1 << 30,
                ))
            fam.append(Variation("podBudget", f"pod CPU budget {budget + 2} (2 more)", amount=2, base=budget))
            families.append(fam)
    # 2. one policy option off
    if not allocatable_only:
        fam = _option_family(config)
        if fam:
            families.append(fam)
    # 3. the pod-level rewrite
    if pod is not None and not allocatable_only and step.reason != "OutOfpods":
        fam = _pod_level_family(scenario, step, pod)
        if fam:
            families.append(fam)
    # 4. the topology policy and scope
    if not allocatable_only and policy in (POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE):
        fam = [
            Variation(
                "topologyPolicy", f"topologyManagerPolicy {POLICY_BEST_EFFORT}", value=POLICY_BEST_EFFORT
            )
        ]
        if policy == POLICY_SINGLE_NUMA_NODE:
            fam.append(
                Variation(
                    "topologyPolicy", f"topologyManagerPolicy {POLICY_RESTRICTED}", value=POLICY_RESTRICTED
                )
            )
        families.append(fam)
    if not allocatable_only and policy != POLICY_NONE:
        other = SCOPE_POD if config.topology_manager_scope == SCOPE_CONTAINER else SCOPE_CONTAINER
        families.append([Variation("topologyScope", f"topologyManagerScope {other}", value=other)])
    # 5. fewer CPUs (too many pods: only a removal helps)
    if pod is not None and step.reason != "OutOfpods":
        big = _biggest_exclusive(pod)
        if big is not None:
            name, n = big
            families.append([
                Variation(
                    "fewerCPUs",
                    f"{k} fewer CPU(s) for container {name} ({n - k} instead of {n})",
                    container=name,
                    amount=k,
                    base=n,
                )
                for k in range(1, min(n - 1, 6) + 1)
            ])
        elif pod.resources is not None and (_cpu_count(pod.resources.requests) or 0) >= 2:
            n = _cpu_count(pod.resources.requests) or 0
            families.append([
                Variation("fewerPodCPUs", f"pod CPU budget {n - k} ({k} fewer)", amount=k, base=n)
                for k in range(1, min(n - 1, 4) + 1)
            ])
    if pod is not None:
        fam = _memory_family(pod, step)
        if fam:
            families.append(fam)
    # 6. one running pod removed first
    running = _running_before(scenario, result, step.index)
    # Try the pods holding the most exclusive CPUs first.
    running.sort(key=lambda r: -r[2])
    families.append([
        Variation("removePod", f"remove running pod {ref} first", value=uid, pod=ref)
        for uid, ref, _held in running
        if uid != step.pod_uid
    ])
    return families


#: the kinds of change tried in a graded family: the first admitted is the nearest
GRADED_KINDS = ("podLevel", "fewerCPUs", "podBudget", "fewerPodCPUs", "fewerMemory")

#: later steps replayed after a suggestion to find its side effects
REPLAY_STEPS = 10
#: removePod variations tried per rejection, and admitted ones reported
REMOVALS_TRIED = 4
REMOVALS_REPORTED = 2

_ATOMS = (int, float, str, bytes, bool, type(None))


def shared_objects(*roots: object) -> dict[int, Any]:
    """A ``copy.deepcopy`` memo holding every object reachable from
    ``roots`` (the machine and the configuration: never changed once the
    node starts), so that copies of a node share them instead of copying
    the CPU table and the device lists each time."""
    memo: dict[int, Any] = {}
    stack: list[object] = list(roots)
    while stack:
        x = stack.pop()
        if isinstance(x, _ATOMS) or id(x) in memo:
            continue
        memo[id(x)] = x
        if isinstance(x, Mapping):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, (list, tuple, set, frozenset)):
            stack.extend(x)
        else:
            stack.extend(getattr(x, "__dict__", {}).values())
            for cls in type(x).__mro__:
                for slot in getattr(cls, "__slots__", ()):
                    if hasattr(x, slot):
                        stack.append(getattr(x, slot))
                # a class compiled by mypyc (the optional compiled engine)
                # has neither __dict__ nor __slots__: it lists its attributes
                for attr in getattr(cls, "__mypyc_attrs__", ()):
                    if hasattr(x, attr):
                        stack.append(getattr(x, attr))
    return memo


def copy_node(node: Node, shared: Mapping[int, Any]) -> Node:
    """A deep copy of ``node`` that shares the objects of ``shared`` (see
    :func:`shared_objects`)."""
    return copy.deepcopy(node, dict(shared))


#: objects ``copy.deepcopy`` hands back as they are, and that a snapshot
#: therefore shares rather than writes out (functions may be closures)
_BY_REFERENCE = (
    types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType, types.CodeType,
    type, weakref.ref, property,
)


#: type -> whether its objects are kept by reference (see _Freezer)
_SHARED_TYPES: dict[type, bool] = {}


class _Freezer(pickle.Pickler):
    """Writes a node out, keeping a reference (not a copy) to each object a
    deep copy would share: those of the shared memo (the machine and the
    configuration), those whose class declares ``__deepcopy__`` (every such
    class in the engine is immutable and returns itself), and functions."""

    def __init__(self, file: io.BytesIO, shared: Mapping[int, Any], refs: list[object]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._shared = shared
        self._refs = refs
        self._index: dict[int, int] = {}

    def persistent_id(self, obj: Any) -> int | None:
        key = id(obj)
        if key not in self._shared:
            cls = type(obj)
            shared = _SHARED_TYPES.get(cls)
            if shared is None:
                shared = _SHARED_TYPES[cls] = hasattr(cls, "__deepcopy__") or issubclass(
                    cls, _BY_REFERENCE
                )
            if not shared:
                return None
        at = self._index.get(key)
        if at is None:
            at = self._index[key] = len(self._refs)
            self._refs.append(obj)
        return at


class _Thawer(pickle.Unpickler):
    def __init__(self, data: bytes, refs: Sequence[object]) -> None:
        super().__init__(io.BytesIO(data))
        self._refs = refs

    def persistent_load(self, pid: Any) -> object:
        return self._refs[pid]


class NodeSnapshot:
    """A node's state at one moment, from which :meth:`thaw` makes as many
    independent copies as needed, each equal to what :func:`copy_node`
    gives (the same objects shared, everything else new).

    The state is written out once (pickled, the shared objects kept by
    reference) and each copy is read back from those bytes: several times
    cheaper than a deep copy for every change a search tries. A node that
    cannot be written out this way is deep-copied instead."""

    __slots__ = ("_data", "_refs", "_node", "_shared")

    def __init__(self, node: Node, shared: Mapping[int, Any]) -> None:
        self._refs: list[object] = []
        self._node: Node | None = None
        self._shared = shared
        buf = io.BytesIO()
        try:
            _Freezer(buf, shared, self._refs).dump(node)
        except (pickle.PicklingError, TypeError, AttributeError):
            self._data = b""
            self._node = copy_node(node, shared)
        else:
            self._data = buf.getvalue()

    def thaw(self) -> Node:
        """A fresh copy of the node as it was."""
        if self._node is not None:
            return copy_node(self._node, self._shared)
        node = _Thawer(self._data, self._refs).load()
        assert isinstance(node, Node)
        return node


def snapshot_steps(scenario: Scenario, *, step: int | None = None, pod: str | None = None) -> set[int]:
    """The ``addPod`` steps an explanation of ``step`` / ``pod`` may search
    from (the node is kept as it is just before each); empty when neither is
    given (a whole-scenario search replays once for all its steps)."""
    if step is None and pod is None:
        return set()
    out: set[int] = set()
    for s in scenario.steps:
        if s.op != "addPod" or s.pod is None:
            continue
        if step is not None and s.index != step:
            continue
        if pod is not None and pod not in (s.pod.ref, s.pod.uid):
            continue
        out.add(s.index)
    return out


@dataclass
class SearchReport:
    """How far one rejection's search went: the changes run, the cuts made
    (caps or the time budget) and the candidate changes not tried."""

    tried: int = 0
    cuts: list[str] = dataclasses.field(default_factory=list)
    not_tried: list[str] = dataclasses.field(default_factory=list)
    #: the outcomes worth showing (in a graded family, the nearest only)
    outcomes: list[Outcome] = dataclasses.field(default_factory=list)
    #: every change run, in the order run (smallest change first)
    tried_outcomes: list[Outcome] = dataclasses.field(default_factory=list)

    @property
    def nearest(self) -> Outcome | None:
        """The smallest change that admits the pod: the first admitted one."""
        return next((o for o in self.tried_outcomes if o.admitted), None)

    def to_json(self) -> dict[str, Any]:
        nearest = self.nearest
        return {
            "tried": self.tried,
            "complete": not self.cuts,
            "cuts": list(self.cuts),
            "notTried": list(self.not_tried),
            "order": list(FAMILY_ORDER),
            "candidates": [
                {
                    "order": i + 1,
                    "family": o.variation.family,
                    "kind": o.variation.kind,
                    "change": o.variation.description,
                    "verdict": _candidate_verdict(o),
                    "admitted": o.admitted,
                    "reason": o.reason if o.admitted is not None else o.error,
                    "message": o.message,
                }
                for i, o in enumerate(self.tried_outcomes)
            ],
            "nearest": None if nearest is None else self.tried_outcomes.index(nearest) + 1,
            "nearestChange": None if nearest is None else nearest.variation.description,
        }


def _candidate_verdict(o: Outcome) -> str:
    if o.admitted is None:
        return "could not be tried"
    return "admitted" if o.admitted else "rejected"


class Search:
    """The re-runs of one scenario's nearest-admissible search, shared by all
    its rejected steps.

    A copy of the node just before each rejected step is kept: handed over
    by the run that produced the result (``snapshots``, see
    :func:`snapshot_steps`), or made by one more pass over the scenario
    (:meth:`prepare`). A change to the pod, or a running pod removed, is then
    tried on a copy of that node (one admission, not a re-run of every
    earlier step). A change to the configuration (topology policy or scope)
    re-runs the scenario once per configuration, for every rejected step at
    once. Side effects: after a change, the steps before the rejected one
    (a configuration change only) and the next :data:`REPLAY_STEPS` steps
    are compared with the original run; the outcome says how many later
    steps were compared when the scenario goes on beyond them.
    """

    def __init__(
        self, scenario: Scenario, result: RunResult,
        snapshots: Mapping[int, NodeSnapshot] | None = None,
    ) -> None:
        self.scenario = scenario
        self.result = result
        self._snapshots: dict[int, NodeSnapshot] = dict(snapshots or {})
        self._runs: dict[tuple[str, ...], dict[int, StepResult | None] | str] = {}
        self._original = {s.index: s for s in result.steps}
        self._positions = {s.index: i for i, s in enumerate(scenario.steps)}
        self._shared: dict[int, Any] | None = None

    def _snapshot(self, node: Node) -> NodeSnapshot:
        if self._shared is None:
            self._shared = shared_objects(self.scenario.machine, self.scenario.config)
        return NodeSnapshot(node, self._shared)

    def prepare(self, indices: Iterable[int]) -> None:
        """Keep the node as it is before each of the steps ``indices``."""
        wanted = set(indices) - set(self._snapshots)
        if not wanted:
            return
        last = max(wanted)
        node = start_node(self.scenario, step_pod_resources=False)
        for step in self.scenario.steps:
            if step.index in wanted:
                self._snapshots[step.index] = self._snapshot(node)
            if step.index >= last:
                break
            play_step(node, step)

    def _window_end(self, step_index: int) -> int:
        """The position of the last step whose admission a change at
        ``step_index`` is compared on."""
        return min(self._positions[step_index] + REPLAY_STEPS, len(self.scenario.steps) - 1)

    def _checked(self, step_index: int) -> int | None:
        later = len(self.scenario.steps) - self._positions[step_index] - 1
        return REPLAY_STEPS if later > REPLAY_STEPS else None

    def _config_run(
        self, variation: Variation, upto: int
    ) -> dict[int, StepResult | None] | str:
        """The scenario re-run with the configuration ``variation`` makes,
        at least to the end of ``upto``'s comparison window (once for every
        step prepared so far). A change to the pod as well (the pod-level
        rewrite with the gates turned on) is made at step ``upto`` and that
        run is not shared."""
        config = varied_config(self.scenario.config, variation)
        pod_too = variation.kind not in CONFIG_KINDS
        key = (variation.kind, str(variation.value), str(upto) if pod_too else "", str(variation.amount))
        if not pod_too:
            # the same configuration reached by another change shares its run
            key = (config.topology_manager_policy, config.topology_manager_scope,
                   repr(sorted(config.cpu_manager_policy_options.items())),
                   repr(sorted(config.topology_manager_policy_options.items())))
        end = self._window_end(upto)
        cached = self._runs.get(key)
        if isinstance(cached, str) or (
            cached is not None and self.scenario.steps[end].index in cached
        ):
            return cached
        scenario = self.scenario.replace(config=config)
        try:
            node = start_node(scenario, step_pod_resources=False)
        except (InputError, KubeletStartupError) as e:
            self._runs[key] = str(e)
            return str(e)
        out: dict[int, StepResult | None] = {}
        last = end if pod_too else max([end, *(self._window_end(i) for i in self._snapshots)])
        for step in scenario.steps[: last + 1]:
            if pod_too and step.index == upto and step.pod is not None:
                try:
                    pod = candidate_pod(self.scenario, upto, step.pod, variation)
                except (InputError, ValueError) as e:
                    return str(e)
                step = step.replace(pod=pod)
            try:
                out[step.index] = play_step(node, step)
            except InputError:
                out[step.index] = None  # e.g. removing a pod this run did not admit
        self._runs[key] = out
        return out

    def _effects(
        self, step_index: int, steps: Mapping[int, StepResult | None]
    ) -> tuple[SideEffect, ...]:
        """The other pods whose admission differs from the original run,
        within ``step_index``'s comparison window."""
        end = self._window_end(step_index)
        effects: list[SideEffect] = []
        for index, new in steps.items():
            old = self._original.get(index)
            if index == step_index or old is None or old.op != "addPod":
                continue
            if self._positions[index] > end or new is None or new.op != "addPod":
                continue
            if bool(old.admitted) != bool(new.admitted):
                effects.append(SideEffect(index, old.pod, _verdict(old), _verdict(new)))
        return tuple(effects)

    def run(self, step: StepResult, variation: Variation) -> Outcome:
        """The outcome of ``variation`` at the rejected ``step``."""
        machine = self.scenario.machine
        if _changes_config(variation):
            run = self._config_run(variation, step.index)
            if isinstance(run, str):
                return Outcome(variation, None, error=run)
            last = run.get(step.index)
            if last is None:
                return Outcome(variation, None, error="the step no longer applies")
            effects = self._effects(step.index, run)
            end = self._window_end(step.index)
            played = [i for i in run if self._positions[i] <= end]
            return self._outcome(
                variation, last, machine, effects, self._checked(step.index),
                through=max(played), gone=tuple(i for i in played if run[i] is None),
            )
        self.prepare([step.index])
        node = self._snapshots[step.index].thaw()
        target = self.scenario.steps[self._positions[step.index]]
        assert target.pod is not None
        try:
            if variation.kind == "removePod" and variation.value is not None:
                node.remove_pod(variation.value, step.index)
                pod = target.pod
            else:
                pod = candidate_pod(self.scenario, step.index, target.pod, variation)
            last = node.add_pod(pod, step.index)
        except (InputError, KubeletStartupError, ValueError, AssertionError) as e:
            return Outcome(variation, None, error=str(e))
        if not last.admitted:
            return self._outcome(variation, last, machine, (), None)
        replayed: dict[int, StepResult | None] = {}
        later = self.scenario.steps[self._positions[step.index] + 1:]
        for s in later[:REPLAY_STEPS]:
            try:
                replayed[s.index] = play_step(node, s)
            except InputError:
                replayed[s.index] = None
        return self._outcome(
            variation, last, machine, self._effects(step.index, replayed), self._checked(step.index),
            through=max(replayed, default=step.index),
            gone=tuple(i for i, r in replayed.items() if r is None),
        )

    @staticmethod
    def _outcome(
        variation: Variation, last: StepResult, machine: Machine,
        effects: tuple[SideEffect, ...], checked: int | None,
        *, through: int | None = None, gone: tuple[int, ...] = (),
    ) -> Outcome:
        if last.admitted:
            nodes, cpus = _placement(last, machine)
            return Outcome(variation, True, numa_nodes=nodes, cpus=cpus,
                           side_effects=effects, checked_steps=checked, through=through, gone=gone)
        return Outcome(
            variation, False, reason=last.reason, message=last.message, stage=last.failed_stage,
            side_effects=effects, checked_steps=checked, through=through, gone=gone,
        )


def planned_runs(families: Sequence[Sequence[Variation]], max_runs: int = MAX_RERUNS) -> int:
    """At most how many changes :func:`search_nearest` runs for these families."""
    total = 0
    for fam in families:
        removals = bool(fam) and fam[0].kind == "removePod"
        total += min(len(fam), REMOVALS_TRIED) if removals else len(fam)
    return min(total, max_runs)


def search_nearest(
    scenario: Scenario,
    result: RunResult,
    step: StepResult,
    *,
    max_runs: int = MAX_RERUNS,
    search: Search | None = None,
    time_budget: float | None = None,
    tick: Callable[[], None] | None = None,
) -> SearchReport:
    """Try each candidate change and report the outcomes with their side
    effects on the other pods, and how far the search went.

    In the graded families (:data:`GRADED_KINDS`) the search stops at
    the first change that admits the pod (the nearest; the smaller changes
    are not needed); at most :data:`REMOVALS_TRIED` running pods are tried
    for removal (those holding the most exclusive CPUs first), and the first
    :data:`REMOVALS_REPORTED` that admit the pod are reported. At most
    ``max_runs`` changes are run, and none is started once ``time_budget``
    seconds have passed. Every change left out by a cap or the time budget
    is listed in the report's ``not_tried``, with the cut in ``cuts``.
    ``tick`` is called after each change run (progress)."""
    search = search if search is not None else Search(scenario, result)
    families = candidate_variations(scenario, result, step)
    report = SearchReport()
    out = report.outcomes
    started = time.monotonic()
    stopped: str | None = None
    for fam in families:
        if stopped is not None:
            report.not_tried.extend(v.description for v in fam)
            continue
        removals = bool(fam) and fam[0].kind == "removePod"
        if removals and len(fam) > REMOVALS_TRIED:
            skipped = fam[REMOVALS_TRIED:]
            fam = fam[:REMOVALS_TRIED]
            report.cuts.append(
                f"{REMOVALS_TRIED} of {len(fam) + len(skipped)} running pods tried for removal "
                "(those holding the most exclusive CPUs first)"
            )
        else:
            skipped = []
        admitted = 0
        for i, v in enumerate(fam):
            if report.tried >= max_runs:
                stopped = f"the cap of {max_runs} changes per rejected pod"
            elif time_budget is not None and time.monotonic() - started >= time_budget:
                stopped = f"the time budget of {time_budget:g} s per rejected pod"
            if stopped is not None:
                report.not_tried.extend(x.description for x in fam[i:])
                break
            outcome = search.run(step, v)
            report.tried += 1
            report.tried_outcomes.append(outcome)
            if tick is not None:
                tick()
            graded = v.kind in GRADED_KINDS
            if graded and not outcome.admitted and v is not fam[-1]:
                continue  # only the nearest (first admitted) or the last tried is reported
            out.append(outcome)
            if graded and outcome.admitted:
                break
            if removals and outcome.admitted:
                admitted += 1
                if admitted >= REMOVALS_REPORTED:
                    skipped = []  # enough found: the others are not needed
                    report.cuts = [c for c in report.cuts if "tried for removal" not in c]
                    break
        report.not_tried.extend(v.description for v in skipped)
    if stopped is not None:
        report.cuts.append(f"stopped at {stopped}")
    return report


def nearest_admissible(
    scenario: Scenario,
    result: RunResult,
    step: StepResult,
    *,
    max_runs: int = MAX_RERUNS,
    search: Search | None = None,
) -> list[Outcome]:
    """The outcomes of :func:`search_nearest` (the candidate changes tried,
    with their side effects on the other pods)."""
    return search_nearest(scenario, result, step, max_runs=max_runs, search=search).outcomes


def _instead(v: Variation) -> str:
    """The new CPU count against the original one, e.g. " (16 instead of 20)"."""
    if v.base is None:
        return ""
    new = v.base + v.amount if v.kind == "podBudget" else v.base - v.amount
    return f" ({new} instead of {v.base})"


def outcome_summary(o: Outcome) -> str:
    text = _outcome_text(o)
    worse = [e for e in o.side_effects if e.was == "admitted"]
    if o.admitted and worse:
        text += "; but then " + ", ".join(e.text() for e in worse[:3])
        if len(worse) > 3:
            text += f" and {len(worse) - 3} more"
    return text


def _outcome_text(o: Outcome) -> str:
    v = o.variation
    if o.admitted is None:
        return f"{v.description}: could not be tried ({o.error})"
    where = f" on NUMA node(s) {_nodes(o.numa_nodes)}" if o.numa_nodes else ""
    if o.admitted:
        if v.kind == "removePod":
            return f"fits{where} if pod {v.pod} is removed"
        if v.kind == "fewerCPUs":
            return f"fits with {v.amount} fewer CPU(s) for container {v.container}{_instead(v)}{where}"
        if v.kind == "podBudget":
            more = f" and {_size(v.memory)} more memory" if v.memory else ""
            return f"fits with a pod CPU budget {v.amount} CPU(s) larger{_instead(v)}{more}{where}"
        if v.kind == "fewerPodCPUs":
            return f"fits with a pod CPU budget {v.amount} CPU(s) smaller{_instead(v)}{where}"
        if v.kind == "podLevel":
            return f"fits{where} with the {v.description}"
        if v.kind == "fewerMemory":
            return f"fits with {_size(v.memory)} less memory: {v.description}{where}"
        return f"fits with {v.description}{where}"
    if v.kind in ("fewerCPUs", "fewerPodCPUs"):
        return f"still rejected even with {v.description} ({o.reason})"
    return f"still rejected with {v.description} ({o.reason})"



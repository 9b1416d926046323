"""The nearest admissible configuration of a rejected pod.

The scenario is re-run up to the rejected step with one change at a time
(a looser topology policy, the other scope, fewer CPUs for the biggest
exclusive container, a larger pod CPU budget, one running pod removed
first) and each outcome is reported from the re-run's own records. The
search is capped (``MAX_RERUNS`` runs per rejection).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import Quantity
from podnuma.cm.container_manager import Node
from podnuma.cm.results import StepResult
from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.scenario import Scenario, Step
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.scenario.run import RunResult, play_step, run_scenario, start_node
from podnuma.units import format_bytes as _size
from podnuma.units import format_nodes as _nodes

__all__ = [
    "MAX_RERUNS",
    "Outcome",
    "REPLAY_STEPS",
    "Search",
    "SearchReport",
    "SideEffect",
    "Variation",
    "apply_variation",
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

MAX_RERUNS = 20


def numa_of_cpus(machine: Machine, cpus: CPUSet) -> list[int]:
    info = machine.topology.cpu_info
    return sorted({info[c].numa_node for c in cpus.list() if c in info})



@dataclass(frozen=True)
class Variation:
    """One change to try on the scenario, up to the rejected step.

    ``kind``: ``topologyPolicy`` (``value`` = policy), ``topologyScope``
    (``value`` = scope), ``fewerCPUs`` (``container``, ``amount`` CPUs less),
    ``podBudget`` (``amount`` CPUs more on the pod-level budget),
    ``removePod`` (``value`` = the running pod's UID, ``pod`` its ref).
    """

    kind: str
    description: str
    value: str | None = None
    container: str | None = None
    amount: int = 0
    pod: str | None = None
    base: int | None = None  # the CPU count before the change (graded kinds)
    memory: int = 0  # podBudget: bytes added to the pod's memory budget too

    def to_json(self) -> dict[str, Any]:
        return {
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


def _modify_pod(pod: Pod, variation: Variation) -> Pod:
    if variation.kind == "fewerCPUs" and variation.container is not None:
        def shrink(c: Container) -> Container:
            if c.name != variation.container:
                return c
            cpu = c.requests.get("cpu") or c.limits.get("cpu")
            assert cpu is not None
            new = cpu.value() - variation.amount
            return dataclasses.replace(
                c, requests=_set_cpu(c.requests, new), limits=_set_cpu(c.limits, new)
            )

        return dataclasses.replace(
            pod,
            init_containers=tuple(shrink(c) for c in pod.init_containers),
            containers=tuple(shrink(c) for c in pod.containers),
        )
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
        res = dataclasses.replace(pod.resources, requests=requests, limits=limits)
        return dataclasses.replace(pod, resources=res)
    return pod


def apply_variation(scenario: Scenario, step_index: int, variation: Variation) -> Scenario:
    """The scenario up to (and including) step ``step_index`` with the
    change applied; the changed step is the last one."""
    pos = position(scenario, step_index)
    steps = list(scenario.steps[: pos + 1])
    config = scenario.config
    target = steps[-1]
    if variation.kind == "topologyPolicy" and variation.value is not None:
        config = dataclasses.replace(config, topology_manager_policy=variation.value)
    elif variation.kind == "topologyScope" and variation.value is not None:
        config = dataclasses.replace(config, topology_manager_scope=variation.value)
    elif variation.kind in ("fewerCPUs", "podBudget", "fewerPodCPUs"):
        assert target.pod is not None
        steps[-1] = dataclasses.replace(target, pod=_modify_pod(target.pod, variation))
    elif variation.kind == "removePod" and variation.value is not None:
        removal = Step(target.index, "removePod", target.path, ref=variation.value)
        steps.insert(len(steps) - 1, removal)
    else:
        raise ValueError(f"unknown variation {variation.kind!r}")
    return dataclasses.replace(scenario, config=config, steps=tuple(steps))


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


def candidate_variations(
    scenario: Scenario, result: RunResult, step: StepResult
) -> list[list[Variation]]:
    """The changes worth trying for a rejected step, in families; within a
    ``fewerCPUs`` family the first admitted one is the nearest."""
    config = scenario.config
    pod = scenario.steps[position(scenario, step.index)].pod
    families: list[list[Variation]] = []
    policy = config.topology_manager_policy
    allocatable_only = step.failed_stage == "nodeAllocatable"
    if not allocatable_only and policy in ("restricted", "single-numa-node"):
        fam = [Variation("topologyPolicy", "topologyManagerPolicy best-effort", value="best-effort")]
        if policy == "single-numa-node":
            fam.append(Variation("topologyPolicy", "topologyManagerPolicy restricted", value="restricted"))
        families.append(fam)
    if not allocatable_only and policy != "none":
        other = "pod" if config.topology_manager_scope == "container" else "container"
        families.append([Variation("topologyScope", f"topologyManagerScope {other}", value=other)])
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
    # Too many pods: only a removal helps.
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
    running = _running_before(scenario, result, step.index)
    # Try the pods holding the most exclusive CPUs first.
    running.sort(key=lambda r: -r[2])
    families.append([
        Variation("removePod", f"remove running pod {ref} first", value=uid, pod=ref)
        for uid, ref, _held in running
        if uid != step.pod_uid
    ])
    return families


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
    outcomes: list[Outcome] = dataclasses.field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "tried": self.tried,
            "complete": not self.cuts,
            "cuts": list(self.cuts),
            "notTried": list(self.not_tried),
        }


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
        self, scenario: Scenario, result: RunResult, snapshots: Mapping[int, Node] | None = None
    ) -> None:
        self.scenario = scenario
        self.result = result
        self._snapshots: dict[int, Node] = dict(snapshots or {})
        self._runs: dict[tuple[str, str], dict[int, StepResult | None] | str] = {}
        self._original = {s.index: s for s in result.steps}
        self._positions = {s.index: i for i, s in enumerate(scenario.steps)}
        self._shared: dict[int, Any] | None = None

    def _copy(self, node: Node) -> Node:
        if self._shared is None:
            self._shared = shared_objects(self.scenario.machine, self.scenario.config)
        return copy_node(node, self._shared)

    def prepare(self, indices: Iterable[int]) -> None:
        """Keep the node as it is before each of the steps ``indices``."""
        wanted = set(indices) - set(self._snapshots)
        if not wanted:
            return
        last = max(wanted)
        node = start_node(self.scenario)
        for step in self.scenario.steps:
            if step.index in wanted:
                self._snapshots[step.index] = self._copy(node)
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

    def _config_run(self, policy: str, scope: str, upto: int) -> dict[int, StepResult | None] | str:
        """The scenario re-run with the topology ``policy`` and ``scope``, at
        least to the end of ``upto``'s comparison window (once for every
        step prepared so far)."""
        key = (policy, scope)
        end = self._window_end(upto)
        cached = self._runs.get(key)
        if isinstance(cached, str) or (
            cached is not None and self.scenario.steps[end].index in cached
        ):
            return cached
        config = dataclasses.replace(
            self.scenario.config, topology_manager_policy=policy, topology_manager_scope=scope
        )
        scenario = dataclasses.replace(self.scenario, config=config)
        try:
            node = start_node(scenario)
        except (InputError, KubeletStartupError) as e:
            self._runs[key] = str(e)
            return str(e)
        out: dict[int, StepResult | None] = {}
        last = max([end, *(self._window_end(i) for i in self._snapshots)])
        for step in scenario.steps[: last + 1]:
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
        if variation.kind in ("topologyPolicy", "topologyScope"):
            config = self.scenario.config
            policy = variation.value if variation.kind == "topologyPolicy" else None
            scope = variation.value if variation.kind == "topologyScope" else None
            run = self._config_run(
                policy or config.topology_manager_policy,
                scope or config.topology_manager_scope,
                step.index,
            )
            if isinstance(run, str):
                return Outcome(variation, None, error=run)
            last = run.get(step.index)
            if last is None:
                return Outcome(variation, None, error="the step no longer applies")
            effects = self._effects(step.index, run)
            return self._outcome(variation, last, machine, effects, self._checked(step.index))
        self.prepare([step.index])
        node = self._copy(self._snapshots[step.index])
        target = self.scenario.steps[self._positions[step.index]]
        assert target.pod is not None
        try:
            if variation.kind == "removePod" and variation.value is not None:
                node.remove_pod(variation.value, step.index)
                pod = target.pod
            else:
                pod = _modify_pod(target.pod, variation)
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
            variation, last, machine, self._effects(step.index, replayed), self._checked(step.index)
        )

    @staticmethod
    def _outcome(
        variation: Variation, last: StepResult, machine: Machine,
        effects: tuple[SideEffect, ...], checked: int | None,
    ) -> Outcome:
        if last.admitted:
            nodes, cpus = _placement(last, machine)
            return Outcome(variation, True, numa_nodes=nodes, cpus=cpus,
                           side_effects=effects, checked_steps=checked)
        return Outcome(
            variation, False, reason=last.reason, message=last.message, stage=last.failed_stage,
            side_effects=effects, checked_steps=checked,
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

    In the graded families (fewer CPUs, larger budget) the search stops at
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
            if tick is not None:
                tick()
            graded = v.kind in ("fewerCPUs", "podBudget", "fewerPodCPUs")
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
        return f"fits with {v.description}{where}"
    if v.kind in ("fewerCPUs", "fewerPodCPUs"):
        return f"still rejected even with {v.description} ({o.reason})"
    return f"still rejected with {v.description} ({o.reason})"



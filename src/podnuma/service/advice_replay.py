"""What ``podnuma advise`` needs beyond the search: the scenario that
replays its figures (``--as-scenario``) and what the rewrite changes in the
cgroups (each container's effective limits before and after, from the
``cgroups plan`` code run on that scenario), devices deferred to container
start and the memory blocks, in words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.analysis.advise import Advice, proposal_scenario
from podnuma.cgroups import plan_cgroups
from podnuma.golang import jsonnumbers as json_numbers
from podnuma.inputs.scenario import load_scenario_text
from podnuma.inputs.text import NOWHERE
from podnuma.machine.topology import Machine
from podnuma.scenario.run import run_scenario
from podnuma.units import format_bytes

__all__ = ["CGROUP_FILES", "cgroup_changes", "beyond_cpus"]

#: the cgroup v2 files compared before/after, per container
CGROUP_FILES = ("cpuset.cpus", "cpuset.mems", "cpu.max", "cpu.weight", "memory.max")


def _container_files(plan: Any, pod_ref: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for node in plan.nodes:
        if node.kind != "container" or node.pod != pod_ref or node.container is None:
            continue
        values = {f.name: f.value for f in node.files if f.name in CGROUP_FILES}
        out[node.container] = values
    return out


def cgroup_changes(advice: Advice, machine: Machine, config_doc: Mapping[str, Any]) -> dict[str, Any]:
    """Per container of a rewritten advice: the cgroup v2 values (systemd
    driver) of :data:`CGROUP_FILES` the kubelet and runc write for the pod
    as written and for the rewrite, each on an empty node (``cgroups plan``
    on the one-copy replay scenario). Empty for a skipped advice."""
    if advice.status != "rewritten":
        return {}
    doc, index = proposal_scenario([advice], machine, config_doc, density=False)
    if not index:
        return {}
    ix = index[0]
    scenario = load_scenario_text(json_numbers.dumps(doc, ensure_ascii=False), name="advice replay", base_dir=NOWHERE,
                                  json_only=True)
    run = run_scenario(scenario)
    steps: Sequence[Any] = scenario.steps
    out: dict[str, Any] = {}
    for form, step in (("before", ix.before_step), ("after", ix.after_step)):
        if step is None:  # (no form admitted: nothing of it runs)
            continue
        result = run.steps[step]
        pod = steps[step].pod
        if pod is None or not result.admitted:
            continue
        plan = plan_cgroups(scenario, run, step=step)
        for name, values in _container_files(plan, pod.ref).items():
            out.setdefault(name, {"before": None, "after": None})[form] = values
    return out


def beyond_cpus(advice: Advice, cgroups: Mapping[str, Any]) -> list[str]:
    """What the rewrite changes beyond CPUs, in words: each moved
    container's memory limit and what it keeps or loses, devices deferred
    to container start, the memory blocks (NUMA nodes) of the pod."""
    lines: list[str] = []
    if advice.rewrite is None or advice.after is None:
        return lines
    budget = advice.rewrite.budget.get("limits", {}).get("memory")
    for p in advice.rewrite.containers:
        if p.role != "shared":
            continue
        c = cgroups.get(p.name) or {}
        b = (c.get("before") or {}).get("memory.max")
        a = (c.get("after") or {}).get("memory.max")
        was = _mem(b) if c.get("before") is not None else "(no cgroup: rejected as written)"
        limit = f"memory.max {was} -> {_mem(a)}" if a is not None else "memory.max unknown"
        what = f"keeps {', '.join(p.kept)}" if p.kept else "keeps none of its own resources"
        if p.lost:
            what += f"; loses {', '.join(p.lost)}"
            if not p.kept and budget is not None:
                what += f" (its memory is bounded by the pod budget, {budget}, only)"
        lines.append(f"{p.name}: {limit}; {what}")
    devices = [
        r for c in advice.after.containers for r in _device_requests(advice, c.name)
    ]
    if devices:
        lines.append(
            "devices (" + ", ".join(sorted(set(devices))) + "): with the pod-level resource managers the "
            "kubelet assigns them when each container starts, not at admission, so the pod's "
            "devices read {} after admission here"
        )
    if advice.before is not None and advice.before.admitted and advice.before.numa_nodes != advice.after.numa_nodes:
        lines.append(
            f"NUMA nodes {list(advice.before.numa_nodes)} -> {list(advice.after.numa_nodes)}"
        )
    alloc = advice.after.pod_allocation
    if alloc is not None and alloc.memory:
        blocks = ", ".join(
            f"{b.type} {_mem(str(b.size))} on NUMA {','.join(str(n) for n in b.numa_nodes)}"
            for b in alloc.memory
        )
        lines.append(f"pod memory blocks (one for the whole budget): {blocks}")
    return lines


def _device_requests(advice: Advice, name: str) -> list[str]:
    pod = advice.pod_after or {}
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    if not isinstance(spec, Mapping):
        return []
    out: list[str] = []
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or ():
            if not isinstance(c, Mapping) or c.get("name") != name:
                continue
            res = c.get("resources") or {}
            for part in ("requests", "limits"):
                for r in (res.get(part) or {}) if isinstance(res, Mapping) else {}:
                    if isinstance(r, str) and "/" in r:
                        out.append(r)
    return out


def _mem(value: str | None) -> str:
    if value is None:
        return "-"
    if value == "max":
        return "max"
    try:
        n = int(value)
    except ValueError:
        return value
    return format_bytes(n)

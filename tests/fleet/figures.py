"""The fleet report's per-run figures read back from a ``simulate`` (or
kubelet oracle) step document: after the final reconcile step, and before
it for what rejected pods held."""

from __future__ import annotations

from typing import Any

from podnuma.machine.cpuset import CPUSet


def is_static(scenario: dict[str, Any]) -> bool:
    """Whether the scenario's kubelet runs the static CPU manager policy."""
    return bool(scenario.get("kubeletConfig", {}).get("cpuManagerPolicy") == "static")


def report_figures(doc: dict[str, Any], static: bool) -> dict[str, int]:
    """Pinned and free CPUs, the CPUs the reconcile loop took back from
    rejected pods, and the rejections. Only the static CPU manager policy
    takes CPUs out of the shared pool: under any other (``none``, the
    default, whose ``defaultCpuSet`` is empty) every CPU but the reserved
    ones is free."""
    cpus = CPUSet.parse(doc["node"]["cpus"])
    reserved = CPUSet.parse(doc["node"]["reservedCpus"])
    *steps, last = doc["steps"]
    assert last["op"] == "reconcile"
    rejected = sum(1 for s in steps if s["admitted"] is False)
    if not static:
        return {"exclusiveCpus": 0, "freeCpus": (cpus - reserved).size(), "rejectedPodCpus": 0,
                "rejected": rejected}
    after = CPUSet.parse(last["defaultCpuSet"])
    before = CPUSet.parse(steps[-1]["defaultCpuSet"]) if steps else after
    return {
        "exclusiveCpus": (cpus - after - reserved).size(),
        "freeCpus": (after - reserved).size(),
        "rejectedPodCpus": (after - before).size(),
        "rejected": rejected,
    }

"""``fleet analyze --what-if ...,restart``: per what-if, the pods a kubelet
restart would move or reject on each node (``podnuma restart`` per node),
and the totals over the nodes where the restart was replayed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.api.qos import QOSClass, served_qos_class
from podnuma.errors import PodnumaError

__all__ = ["restart_scenario_of", "restart_section", "served_classes"]

_COUNTS = ("kept", "moved", "rejected", "unknown", "cpusTakenByNobody")


def _figures(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    done = [(name, r) for name, r in runs if "error" not in r]
    out: dict[str, Any] = {"nodes": len(done), "notReplayed": len(runs) - len(done)}
    for key in _COUNTS:
        out[key] = sum(int(r[key]) for _, r in done)
    out["nodesThatWouldNotStartAgain"] = sorted(name for name, r in done if r["nextStartFails"])
    return out


def restart_section(nodes: Sequence[Mapping[str, Any]], what_ifs: Sequence[str]) -> dict[str, Any]:
    """``{"restart": {label: {...}}}`` for the what-ifs with a restart (empty
    when none has one). The totals are over the nodes whose configuration
    is known, as the report's other totals; the nodes whose configuration
    is assumed are counted apart (``assumed``: the same figures) and their
    pods marked ``configAssumed``."""
    out: dict[str, Any] = {}
    for label in what_ifs:
        runs = [
            (str(n["name"]), n["whatIfs"][label]["restart"], bool(n.get("configAssumed")))
            for n in nodes
            if "restart" in n.get("whatIfs", {}).get(label, {})
        ]
        if not runs:
            continue
        section = _figures([(name, r) for name, r, assumed in runs if not assumed])
        section["pods"] = [
            {"node": name, **p, **({"configAssumed": True} if assumed else {})}
            for name, r, assumed in runs if "error" not in r for p in r["pods"]
        ]
        apart = [(name, r) for name, r, assumed in runs if assumed]
        if apart:
            section["assumed"] = _figures(apart)
        out[label] = section
    return {"restart": out} if out else {}


def served_classes(steps: Sequence[Mapping[str, Any]]) -> dict[str, QOSClass]:
    """The QoS class each pod of the ``addPod`` steps (a run's pods, as the
    fleet read them) was served (its ``status.qosClass``), by
    ``NAMESPACE/NAME``: the class the replay gave it, and the one the
    kubelet reads before and after a restart (``GetPodQOS``)."""
    out: dict[str, QOSClass] = {}
    for step in steps:
        pod = step.get("addPod")
        if not isinstance(pod, Mapping):
            continue
        status, meta = pod.get("status"), pod.get("metadata")
        qos = served_qos_class(status.get("qosClass")) if isinstance(status, Mapping) else None
        if qos is None or not isinstance(meta, Mapping) or type(meta.get("name")) is not str:
            continue
        ns = meta.get("namespace") or "default"
        if type(ns) is str:
            out[f"{ns}/{meta['name']}"] = qos
    return out


def restart_scenario_of(run: Mapping[str, Any], node: str) -> dict[str, Any] | None:
    """The restart scenario of a what-if's run (the run's scenario as
    ``fleet analyze --as-scenario`` writes it): the run's pods admitted as
    in the run, then the kubelet restarted -- the scenario ``podnuma
    restart --as-scenario`` writes, whose replay gives the what-if's
    ``restart`` figures. ``None`` when the restart is not replayed (the
    report says why)."""
    from podnuma.analysis.restart import restart_after_document  # only for a restart what-if

    doc = {**run, "steps": [s for s in run.get("steps") or () if "addPod" in s]}
    try:
        return restart_after_document(doc, name=f"node {node}", served=served_classes(doc["steps"])).scenario
    except PodnumaError:
        return None

"""The fleet report: per-node results and fleet-wide sums (JSON-ready).

:func:`fleet_report` turns the per-node results of the replay into the
document ``podnuma fleet analyze -o json`` prints and the table and HTML
renderers read: ``summary`` (the fleet as it runs, and under each what-if,
with the change), ``workloads`` (density per workload), ``rejected`` (pods
the nodes would refuse, by what-if), ``issues`` and ``nodes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.fleet.inputs import FleetInputs
from podnuma.fleet.model import Issue
from podnuma.fleet.restart import restart_section

__all__ = ["API_VERSION", "KIND", "fleet_report", "BASELINE"]

API_VERSION = "podnuma.io/v1"
KIND = "FleetReport"
BASELINE = "as running"
_SUMS = ("exclusiveCpus", "sidecarOnlyCpus", "strandedCpus", "freeCpus", "cpus", "reservedCpus",
         "pods", "admitted", "rejectedPodCpus")
#: the figures whose change a what-if reports
CHANGES = ("nodes", "pods", "admitted", "cpus", "reservedCpus", "exclusiveCpus", "sidecarOnlyCpus",
           "strandedCpus", "freeCpus", "rejectedPodCpus", "rejected", "spanningPods", "rewrittenPods")


def _totals(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {k: 0 for k in _SUMS}
    out["rejected"] = 0
    out["spanningPods"] = 0
    out["rewrittenPods"] = 0
    out["nodes"] = 0
    spread: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for r in runs:
        if "error" in r:
            continue
        out["nodes"] += 1
        for k in _SUMS:
            out[k] += int(r.get(k, 0))
        out["rejected"] += len(r["rejected"])
        out["spanningPods"] += len(r["spanningPods"])
        out["rewrittenPods"] += int(r.get("rewrittenPods", 0))
        for k, v in r["numaSpread"].items():
            spread[k] = spread.get(k, 0) + v
        for rej in r["rejected"]:
            reasons[str(rej["reason"])] = reasons.get(str(rej["reason"]), 0) + 1
    out["numaSpread"] = dict(sorted(spread.items(), key=lambda kv: int(kv[0])))
    out["rejectedByReason"] = dict(sorted(reasons.items()))
    return out


def _density(nodes: Sequence[Mapping[str, Any]], label: str | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for n in nodes:
        run = n.get("baseline") if label is None else (n.get("whatIfs") or {}).get(label)
        if not run or "error" in run:
            continue
        for name, d in run.get("density", {}).items():
            w = out.setdefault(name, {"kind": d["kind"], "nodes": 0, "copies": 0,
                                      "min": None, "max": None})
            w["nodes"] += 1
            w["copies"] += d["copies"]
            w["min"] = d["copies"] if w["min"] is None else min(w["min"], d["copies"])
            w["max"] = d["copies"] if w["max"] is None else max(w["max"], d["copies"])
    return dict(sorted(out.items()))


def _known(n: Mapping[str, Any]) -> bool:
    """Replayed, under a configuration that is not an assumption."""
    return "baseline" in n and not n.get("configAssumed")


def _refs(run: Mapping[str, Any]) -> set[str]:
    return {str(r["pod"]) for r in run.get("rejected", [])}


def _what_if_totals(nodes: Sequence[Mapping[str, Any]], label: str) -> dict[str, Any]:
    """A what-if's totals over the known nodes it replayed, its change
    against the same nodes as running, and the CPUs it frees for other
    pods."""
    same = [n for n in nodes if label in n.get("whatIfs", {}) and "error" not in n["whatIfs"][label]]
    failed = sorted(str(n["name"]) for n in nodes
                    if label in n.get("whatIfs", {}) and "error" in n["whatIfs"][label])
    t = _totals([n["whatIfs"][label] for n in same])
    b = _totals([n["baseline"] for n in same])
    t["errors"] = len(failed)
    t["excludedNodes"] = failed
    t["change"] = {k: t[k] - b[k] for k in CHANGES}
    freed = 0
    counted = 0
    turned_away: list[dict[str, Any]] = []
    for n in same:
        w, base = n["whatIfs"][label], n["baseline"]
        newly = sorted(_refs(w) - _refs(base))
        delta = int(w["freeCpus"]) - int(base["freeCpus"])
        if newly:
            turned_away.append({"node": n["name"], "rejectedPods": len(newly), "freeCpusChange": delta})
        else:
            counted += 1
            freed += delta
    t["freedForOtherPods"] = {"cpus": freed, "nodes": counted, "nodesRejectingRunningPods": turned_away}
    return t


def fleet_report(
    inputs: FleetInputs, nodes: Sequence[Mapping[str, Any]], what_ifs: Sequence[str]
) -> dict[str, Any]:
    """The report document."""
    known = [n for n in nodes if _known(n)]
    assumed_nodes = [n for n in nodes if "baseline" in n and n.get("configAssumed")]
    summary: dict[str, Any] = {BASELINE: _totals([n["baseline"] for n in known])}
    for label in what_ifs:
        summary[label] = _what_if_totals(known, label)
    assumed_totals = _totals([n["baseline"] for n in assumed_nodes])
    assumed: dict[str, Any] = {
        "nodes": [{"name": n["name"], "configSource": n.get("configSource"),
                   "contradictions": list(n.get("contradictions", []))} for n in assumed_nodes],
        BASELINE: assumed_totals,
    }
    workloads: dict[str, Any] = {}
    base_d = _density(known, None)
    for name, d in base_d.items():
        workloads[name] = {"kind": d["kind"], "nodes": d["nodes"], BASELINE: {
            "copies": d["copies"], "min": d["min"], "max": d["max"]}}
    for label in what_ifs:
        same = [n for n in known if "error" not in n.get("whatIfs", {}).get(label, {"error": ""})]
        base_same = _density(same, None)
        for name, d in _density(same, label).items():
            w = workloads.setdefault(name, {"kind": d["kind"], "nodes": d["nodes"]})
            w[label] = {"copies": d["copies"], "min": d["min"], "max": d["max"]}
            if name in base_same:  # the change over the same nodes
                w[label]["change"] = d["copies"] - base_same[name]["copies"]
    rejected: dict[str, list[dict[str, Any]]] = {}
    for label in (BASELINE, *what_ifs):
        rows: list[dict[str, Any]] = []
        for n in nodes:
            run = n.get("baseline") if label == BASELINE else n.get("whatIfs", {}).get(label)
            if run and "error" not in run:
                extra = {"configAssumed": True} if n.get("configAssumed") else {}
                rows.extend({"node": n["name"], **r, **extra} for r in run["rejected"])
        rejected[label] = rows
    # pod-level what-ifs: every pod not rewritten, with advise's reason
    not_rewritten: dict[str, list[dict[str, Any]]] = {}
    for label in what_ifs:
        nr = [{"node": n["name"], **r} for n in nodes
              for r in (n.get("whatIfs", {}).get(label) or {}).get("notRewritten", ())]
        if nr or any("notRewritten" in (n.get("whatIfs", {}).get(label) or {}) for n in nodes):
            not_rewritten[label] = nr
    issues: list[dict[str, Any]] = [i.as_dict() for i in inputs.issues]
    for n in nodes:
        issues.extend(n.get("issues", []))
    for n in nodes:
        for label, run in n.get("whatIfs", {}).items():
            if "error" in run:
                issues.append(Issue("error", f"what-if {label}: {run['error']}",
                                    node=str(n["name"])).as_dict())
            elif "error" in (run.get("restart") or {}):  # (counted as notReplayed: say why)
                issues.append(Issue("error", f"what-if {label}: the restart is not replayed: "
                                    f"{run['restart']['error']}", node=str(n["name"])).as_dict())
    status: dict[str, int] = {"ok": 0, "warning": 0, "error": 0}
    for n in nodes:
        status[str(n["status"])] = status.get(str(n["status"]), 0) + 1
    on_nodes = sum(int(n.get("podCount", 0)) for n in nodes)
    replayed = sum(int(n["baseline"]["pods"]) for n in nodes if "baseline" in n)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "whatIfs": list(what_ifs),
        "fleet": {
            "nodes": len(nodes),
            "nodeStatus": status,
            "nodesInTotals": len(known),
            "nodesAssumed": len(assumed_nodes),
            "podsInDumps": inputs.pods_total,
            "podsDumpedTwice": inputs.pods_duplicated,
            "podsWithoutNode": inputs.pods_without_node,
            "podsOnNodes": on_nodes,
            "podsReplayed": replayed,
            "podsInTotals": summary[BASELINE]["pods"],
            "podsOnAssumedNodes": assumed_totals["pods"],
        },
        "summary": summary,
        "assumed": assumed,
        "workloads": workloads,
        "rejected": rejected,
        **restart_section(nodes, what_ifs),
        "notRewritten": not_rewritten,
        "issues": issues,
        "nodes": list(nodes),
    }

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
         "pods", "admitted")


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


def fleet_report(
    inputs: FleetInputs, nodes: Sequence[Mapping[str, Any]], what_ifs: Sequence[str]
) -> dict[str, Any]:
    """The report document."""
    base_runs = [n["baseline"] for n in nodes if "baseline" in n]
    summary: dict[str, Any] = {BASELINE: _totals(base_runs)}
    for label in what_ifs:
        runs = [n["whatIfs"][label] for n in nodes if label in n.get("whatIfs", {})]
        t = _totals(runs)
        t["errors"] = sum(1 for r in runs if "error" in r)
        b = summary[BASELINE]
        t["change"] = {k: t[k] - b[k] for k in ("exclusiveCpus", "sidecarOnlyCpus", "strandedCpus",
                                                  "freeCpus", "rejected", "spanningPods")}
        summary[label] = t
    workloads: dict[str, Any] = {}
    base_d = _density(nodes, None)
    for name, d in base_d.items():
        workloads[name] = {"kind": d["kind"], "nodes": d["nodes"], BASELINE: {
            "copies": d["copies"], "min": d["min"], "max": d["max"]}}
    for label in what_ifs:
        for name, d in _density(nodes, label).items():
            w = workloads.setdefault(name, {"kind": d["kind"], "nodes": d["nodes"]})
            w[label] = {"copies": d["copies"], "min": d["min"], "max": d["max"]}
    rejected: dict[str, list[dict[str, Any]]] = {}
    for label in (BASELINE, *what_ifs):
        rows: list[dict[str, Any]] = []
        for n in nodes:
            run = n.get("baseline") if label == BASELINE else n.get("whatIfs", {}).get(label)
            if run and "error" not in run:
                rows.extend({"node": n["name"], **r} for r in run["rejected"])
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
    status: dict[str, int] = {"ok": 0, "warning": 0, "error": 0}
    for n in nodes:
        status[str(n["status"])] = status.get(str(n["status"]), 0) + 1
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "whatIfs": list(what_ifs),
        "fleet": {
            "nodes": len(nodes),
            "nodeStatus": status,
            "podsInDumps": inputs.pods_total,
            "podsWithoutNode": inputs.pods_without_node,
            "podsReplayed": sum(int(n.get("podCount", 0)) for n in nodes if "baseline" in n),
        },
        "summary": summary,
        "workloads": workloads,
        "rejected": rejected,
        **restart_section(nodes, what_ifs),
        "notRewritten": not_rewritten,
        "issues": issues,
        "nodes": list(nodes),
    }

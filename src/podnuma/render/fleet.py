"""Tables of ``podnuma fleet analyze -o table``.

Reads the report document of :func:`podnuma.fleet.report.fleet_report`:
the fleet-wide figures as running and under each what-if (with the
change), density per workload, the nodes with the most CPUs pinned to
sidecars or stranded, the pods a what-if would get rejected, and the input
issues.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

__all__ = ["fleet_tables", "METRICS", "top_nodes"]

BASELINE = "as running"

#: (report key, label) of the fleet-wide figures.
METRICS: tuple[tuple[str, str], ...] = (
    ("nodes", "nodes replayed"),
    ("pods", "pods replayed"),
    ("cpus", "CPUs"),
    ("reservedCpus", "reserved CPUs"),
    ("exclusiveCpus", "exclusive CPUs (pinned)"),
    ("sidecarOnlyCpus", "CPUs pinned only to sidecars"),
    ("strandedCpus", "stranded CPUs"),
    ("freeCpus", "free CPUs (shared pool)"),
    ("rejected", "pods rejected"),
    ("spanningPods", "pods spanning NUMA nodes"),
    ("rewrittenPods", "pods rewritten pod-level"),
)


def _delta(v: int) -> str:
    return f" ({v:+d})" if v else ""


def _summary(report: Mapping[str, Any]) -> Table:
    labels = [BASELINE, *report["whatIfs"]]
    t = Table(title="fleet", box=box.SIMPLE_HEAD, title_justify="left")
    t.add_column("")
    for lab in labels:
        t.add_column(lab, justify="right")
    summ = report["summary"]
    base = summ[BASELINE]
    for key, label in METRICS:
        row = [label]
        for lab in labels:
            v = int(summ[lab].get(key, 0))
            row.append(f"{v}{_delta(v - int(base.get(key, 0))) if lab != BASELINE else ''}")
        t.add_row(*(Text(c) for c in row))
    return t


def _workloads(report: Mapping[str, Any]) -> Table:
    labels = [BASELINE, *report["whatIfs"]]
    t = Table(title="density: copies of each Guaranteed workload that fit on an empty node "
              "(summed over the nodes running it; min-max per node)",
              box=box.SIMPLE_HEAD, title_justify="left")
    t.add_column("workload")
    t.add_column("kind")
    t.add_column("nodes", justify="right")
    for lab in labels:
        t.add_column(lab, justify="right")
    for name, w in report["workloads"].items():
        row = [name, w["kind"], str(w["nodes"])]
        base = w.get(BASELINE)
        for lab in labels:
            d = w.get(lab)
            if d is None:
                row.append("-")
                continue
            change = ""
            if lab != BASELINE and base is not None:
                change = _delta(d["copies"] - base["copies"])
            row.append(f"{d['copies']}{change} [{d['min']}-{d['max']}]")
        t.add_row(*(Text(c) for c in row))
    return t


def top_nodes(report: Mapping[str, Any], n: int = 15) -> list[Mapping[str, Any]]:
    """The nodes with the most CPUs pinned to sidecars, then stranded."""
    nodes = [x for x in report["nodes"] if "baseline" in x]
    nodes.sort(key=lambda x: (-x["baseline"]["sidecarOnlyCpus"], -x["baseline"]["strandedCpus"],
                              x["name"]))
    return nodes[:n]


def _nodes(report: Mapping[str, Any], n: int) -> Table:
    t = Table(title=f"nodes with the most CPUs pinned to sidecars (top {n})",
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("node", "type", "cpu/topology policy", "pods", "CPUs", "exclusive",
                "sidecar-only", "stranded", "free"):
        t.add_column(col, justify="left" if col in ("node", "type", "cpu/topology policy") else "right",
                     no_wrap=col == "node")
    for lab in report["whatIfs"]:
        t.add_column(f"free {lab}", justify="right")
    for x in top_nodes(report, n):
        b = x["baseline"]
        cfg = x.get("config", {})
        row = [
            x["name"], x["labels"].get("node.kubernetes.io/instance-type", "-"),
            f"{cfg.get('cpuManagerPolicy', '-')}/{cfg.get('topologyManagerPolicy', '-')}",
            str(b["pods"]), str(b["cpus"]), str(b["exclusiveCpus"]), str(b["sidecarOnlyCpus"]),
            str(b["strandedCpus"]), str(b["freeCpus"]),
        ]
        for lab in report["whatIfs"]:
            run = x.get("whatIfs", {}).get(lab, {})
            row.append("error" if "error" in run else
                       f"{run.get('freeCpus', 0)}{_delta(run.get('freeCpus', 0) - b['freeCpus'])}")
        t.add_row(*(Text(c) for c in row))
    return t


def _rejected(report: Mapping[str, Any]) -> Table | None:
    rows: dict[tuple[str, str, str, str], int] = {}
    for lab, items in report["rejected"].items():
        for r in items:
            key = (lab, str(r.get("workload") or r["pod"]), str(r["reason"]), str(r.get("message") or ""))
            rows[key] = rows.get(key, 0) + 1
    if not rows:
        return None
    t = Table(title="pods that would be rejected", box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("run", "workload", "pods", "reason", "message"):
        t.add_column(col, justify="right" if col == "pods" else "left")
    for (lab, w, reason, msg), count in sorted(rows.items()):
        t.add_row(*(Text(c) for c in (lab, w, str(count), reason, msg)))
    return t


def _changed_pods(report: Mapping[str, Any], limit: int = 30) -> RenderableType | None:
    """The ``gates`` what-ifs: the pods that behave otherwise, and how."""
    rows = [(lab, r) for lab, items in (report.get("changedPods") or {}).items() for r in items]
    if not rows and not report.get("changedPods"):
        return None
    labels = ", ".join(report.get("changedPods") or {})
    t = Table(title=f"pods that change when the gates are on ({labels}): {len(rows)}",
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("node", "pod", "change"):
        t.add_column(col)
    for _, r in rows[:limit]:
        t.add_row(Text(str(r["node"])), Text(str(r["pod"])), Text("; ".join(r["changes"])))
    if len(rows) > limit:
        return Group(t, Text(f"... and {len(rows) - limit} more (see -o json)"))
    return t


def _issues(issues: Sequence[Mapping[str, Any]], limit: int = 20) -> RenderableType | None:
    shown = [i for i in issues if i["severity"] != "info"]
    if not shown:
        return None
    t = Table(title=f"input issues ({len(shown)})", box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("severity", "node", "where", "message"):
        t.add_column(col)
    for i in shown[:limit]:
        where = ": ".join(p for p in (i.get("file"), i.get("path")) if p)
        t.add_row(*(Text(c) for c in (i["severity"], i.get("node") or "-", where or "-", i["message"])))
    if len(shown) > limit:
        return Group(t, Text(f"... and {len(shown) - limit} more (see -o json)"))
    return t


def fleet_tables(report: Mapping[str, Any], *, top: int = 15) -> RenderableType:
    f = report["fleet"]
    st = f["nodeStatus"]
    head = Text(
        f"{f['nodes']} nodes ({st.get('ok', 0)} ok, {st.get('warning', 0)} with warnings, "
        f"{st.get('error', 0)} not replayed), {f['podsReplayed']} pods replayed"
    )
    parts: list[RenderableType] = [head, _summary(report), _workloads(report), _nodes(report, top)]
    rej = _rejected(report)
    if rej is not None:
        parts.append(rej)
    changed = _changed_pods(report)
    if changed is not None:
        parts.append(changed)
    iss = _issues(report["issues"])
    if iss is not None:
        parts.append(iss)
    return Group(*parts)

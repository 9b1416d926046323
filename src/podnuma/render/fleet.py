"""Tables of ``podnuma fleet analyze -o table``.

Reads the report document of :func:`podnuma.fleet.report.fleet_report`:
the fleet-wide figures as running and under each what-if (with the
change over the same nodes, and the CPUs it frees for other pods), the
nodes whose configuration is assumed (apart from the totals), density per
workload, the nodes with the most CPUs pinned to sidecars or stranded, the
pods a what-if would get rejected, and the input issues.

A what-if's column is headed ``(N) LABEL``, N its place on the command
line: however narrow the terminal, two what-ifs never share a header.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from podnuma.fieldkit import inert
from podnuma.render.wrap import words

__all__ = ["fleet_tables", "METRICS", "top_nodes", "what_if_header", "freed_line", "free_cell", "headline"]

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
    ("rejectedPodCpus", "CPUs of rejected pods, returned"),
    ("rejected", "pods rejected"),
    ("spanningPods", "pods spanning NUMA nodes"),
    ("rewrittenPods", "pods rewritten pod-level"),
)


def _cell(text: str) -> Text:
    """A cell (or line) of the tables: the names and messages it quotes come
    from the inputs (a pod or node name, a file name), so their line breaks
    and control characters are written escaped (:func:`~podnuma.fieldkit.inert`),
    never passed to the terminal; ``-o json``/``yaml`` keep them as they are."""
    return Text(inert(text))


def _text(text: str) -> RenderableType:
    """A cell of names or words (a node, a pod, a file, a message): escaped
    as :func:`_cell`'s, wrapped at spaces and at a name's separators, never
    cut short, a piece wider than the column cut only when nothing else
    fits (:func:`~podnuma.render.wrap.words`)."""
    return words(inert(text))


def _delta(v: int) -> str:
    return f" ({v:+d})" if v else ""


#: a what-if label longer than this is named in the legend only
SHORT_LABEL = 20


def what_if_header(report: Mapping[str, Any], label: str, prefix: str = "") -> str:
    """``(N) LABEL`` (``(N)`` alone for a long label, which the legend
    line names): a what-if's column header, unique at any width."""
    n = list(report["whatIfs"]).index(label) + 1
    return f"{prefix}({n}) {label}" if len(label) <= SHORT_LABEL and not prefix else f"{prefix}({n})"


def _header_column(t: Table, text: str) -> None:
    # fold, never an ellipsis, and never narrower than the "(N)" mark: a
    # header cut short could read as another's
    text = inert(text)
    mark = text[: text.index(")") + 1]
    t.add_column(Text(text), justify="right", overflow="fold", min_width=max(len(mark), 7))


def freed_line(report: Mapping[str, Any], label: str) -> str:
    """The what-if's "CPUs freed for other pods" sentence."""
    t = report["summary"][label]
    fr = t.get("freedForOtherPods") or {}
    cpus = int(fr.get("cpus", 0))
    n = list(report["whatIfs"]).index(label) + 1
    text = (f"({n}) {label}: CPUs freed for other pods: {cpus:+d} "
            f"(free CPUs, over the {fr.get('nodes', 0)} node(s) where it rejects no running pod)")
    away = fr.get("nodesRejectingRunningPods") or []
    if away:
        pods = sum(int(a["rejectedPods"]) for a in away)
        change = sum(int(a["freeCpusChange"]) for a in away)
        text += (f"; not counted: {len(away)} node(s) where it rejects {pods} pod(s) running "
                 f"today, whose free CPUs change by {change:+d} because those pods are turned away")
    excluded = t.get("excludedNodes") or []
    if excluded:
        text += (f"; {len(excluded)} node(s) left out of this column and of its changes (the what-if "
                 f"fails there): {', '.join(excluded)}")
    return text


def _summary(report: Mapping[str, Any]) -> Table:
    t = Table(title="fleet: the nodes whose configuration is known", box=box.SIMPLE_HEAD,
              title_justify="left")
    t.add_column("", overflow="fold")
    t.add_column(BASELINE, justify="right", overflow="fold")
    for lab in report["whatIfs"]:
        _header_column(t, what_if_header(report, lab))
    summ = report["summary"]
    for key, label in METRICS:
        row = [label, str(int(summ[BASELINE].get(key, 0)))]
        for lab in report["whatIfs"]:
            w = summ[lab]
            change = int((w.get("change") or {}).get(key, 0))
            row.append(f"{int(w.get(key, 0))}{_delta(change)}")
        t.add_row(*(_cell(c) for c in row))
    if report["whatIfs"]:
        row = ["CPUs freed for other pods", "-"]
        for lab in report["whatIfs"]:
            row.append(f"{int((summ[lab].get('freedForOtherPods') or {}).get('cpus', 0)):+d}")
        t.add_row(*(_cell(c) for c in row))
    return t


def _assumed(report: Mapping[str, Any]) -> Table | None:
    assumed = report.get("assumed") or {}
    rows = assumed.get("nodes") or []
    if not rows:
        return None
    by_name = {str(n["name"]): n for n in report["nodes"]}
    t = Table(title="nodes whose kubelet configuration is assumed (the kubelet's defaults: no configz, "
              "no node group), not in the totals", box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("node", "pods", "CPUs", "exclusive", "free", "rejected", "what contradicts the assumption"):
        t.add_column(col, justify="right" if col in ("pods", "CPUs", "exclusive", "free", "rejected")
                     else "left", overflow="fold")
    for a in rows:
        b = by_name[str(a["name"])]["baseline"]
        found = a.get("contradictions") or []
        t.add_row(_text(str(a["name"])), *(_cell(c) for c in (
            str(b["pods"]), str(b["cpus"]), str(b["exclusiveCpus"]), str(b["freeCpus"]),
            str(len(b["rejected"])))), _text("; ".join(found) if found else "nothing in the dumps"))
    return t


def _workloads(report: Mapping[str, Any]) -> Table:
    labels = [BASELINE, *report["whatIfs"]]
    t = Table(title="density: copies of each Guaranteed workload that fit on an empty node "
              "(summed over the nodes running it; min-max per node)",
              box=box.SIMPLE_HEAD, title_justify="left")
    t.add_column("workload", overflow="fold")
    t.add_column("kind", overflow="fold")
    t.add_column("nodes", justify="right", overflow="fold")
    t.add_column(BASELINE, justify="right", overflow="fold")
    for lab in report["whatIfs"]:
        _header_column(t, what_if_header(report, lab))
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
                change = _delta(int(d.get("change", 0)))
            row.append(f"{d['copies']}{change} [{d['min']}-{d['max']}]")
        t.add_row(_text(row[0]), *(_cell(c) for c in row[1:]))
    return t


def top_nodes(report: Mapping[str, Any], n: int = 15) -> list[Mapping[str, Any]]:
    """The nodes with the most CPUs pinned to sidecars, then stranded."""
    nodes = [x for x in report["nodes"] if "baseline" in x]
    nodes.sort(key=lambda x: (-x["baseline"]["sidecarOnlyCpus"], -x["baseline"]["strandedCpus"],
                              x["name"]))
    return nodes[:n]


#: the node table's baseline columns, dropped from the first when the
#: terminal is too narrow for the what-if columns (which are never dropped)
_NODE_COLUMNS = ("node", "type", "cpu/topology policy", "pods", "CPUs", "exclusive",
                 "sidecar-only", "stranded", "free")
_DROP_ORDER = ("type", "cpu/topology policy", "CPUs", "stranded", "pods", "exclusive", "sidecar-only")


def _nodes_table(report: Mapping[str, Any], n: int, drop: Sequence[str]) -> Table:
    t = Table(title=f"nodes with the most CPUs pinned to sidecars (top {n}; assumed configurations "
              "marked *)",
              box=box.SIMPLE_HEAD, title_justify="left")
    cols = [c for c in _NODE_COLUMNS if c not in drop]
    for col in cols:
        t.add_column(col, justify="left" if col in ("node", "type", "cpu/topology policy") else "right",
                     overflow="fold",  # (wrapped, never cut short: no figure or name lost)
                     min_width=max(len(w) for w in col.replace("/", "/ ").split()))  # (a header word whole)
    for lab in report["whatIfs"]:
        _header_column(t, what_if_header(report, lab, "free "))
    for x in top_nodes(report, n):
        b = x["baseline"]
        cfg = x.get("config", {})
        cells = {
            "node": f"{x['name']}{' *' if x.get('configAssumed') else ''}",
            "type": x["labels"].get("node.kubernetes.io/instance-type", "-"),
            "cpu/topology policy": f"{cfg.get('cpuManagerPolicy', '-')}/{cfg.get('topologyManagerPolicy', '-')}",
            "pods": str(b["pods"]), "CPUs": str(b["cpus"]), "exclusive": str(b["exclusiveCpus"]),
            "sidecar-only": str(b["sidecarOnlyCpus"]), "stranded": str(b["strandedCpus"]),
            "free": str(b["freeCpus"]),
        }
        row = [cells[c] for c in cols]
        for lab in report["whatIfs"]:
            row.append(free_cell(b, x.get("whatIfs", {}).get(lab, {})))
        t.add_row(*(_text(c) if col == "node" else _cell(c) for c, col in zip(row, [*cols, *report["whatIfs"]],
                                                                               strict=True)))
    return t


class _NodesByWidth:
    """The node table, with as many baseline columns as the width allows:
    every what-if column is always shown, whole."""

    def __init__(self, report: Mapping[str, Any], n: int) -> None:
        self.report, self.n = report, n

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        drop: list[str] = []
        table = _nodes_table(self.report, self.n, drop)
        for col in _DROP_ORDER:
            if Measurement.get(console, options.update_width(10**6), table).minimum <= options.max_width:
                break
            drop.append(col)
            table = _nodes_table(self.report, self.n, drop)
        yield table
        if drop:  # (said, never silent: -o json has every column)
            yield Text(f"(left out to fit {options.max_width} columns: {', '.join(drop)}; -o json has them)")


def _nodes(report: Mapping[str, Any], n: int) -> RenderableType:
    return _NodesByWidth(report, n)


def free_cell(base: Mapping[str, Any], run: Mapping[str, Any]) -> str:
    """A node's free CPUs under a what-if, with the change; the pods it
    turns away named beside it (their CPUs are no gain)."""
    if "error" in run:
        return "error"
    free = int(run.get("freeCpus", 0))
    text = f"{free}{_delta(free - int(base['freeCpus']))}"
    turned = {str(r["pod"]) for r in run.get("rejected", [])} - {str(r["pod"]) for r in base["rejected"]}
    if turned:
        text += f" {len(turned)} rejected"
    return text


def _rejected(report: Mapping[str, Any]) -> Table | None:
    rows: dict[tuple[str, str, str, str], int] = {}
    for lab, items in report["rejected"].items():
        for r in items:
            who = str(r.get("workload") or r["pod"]) + (" *" if r.get("configAssumed") else "")
            key = (lab, who, str(r["reason"]), str(r.get("message") or ""))
            rows[key] = rows.get(key, 0) + 1
    if not rows:
        return None
    t = Table(title="pods that would be rejected (* on a node whose configuration is assumed)",
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("run", "workload", "pods", "reason", "message"):
        t.add_column(col, justify="right" if col == "pods" else "left", overflow="fold")
    for (lab, w, reason, msg), count in sorted(rows.items()):
        run = lab if lab == BASELINE else f"({list(report['whatIfs']).index(lab) + 1}) {lab}"
        t.add_row(_cell(run), _text(w), _cell(str(count)), _text(reason), _text(msg))
    return t


def _restart(report: Mapping[str, Any]) -> Table | None:
    """``--what-if ...,restart``: the pods a kubelet restart would move or
    reject, per node."""
    sections = report.get("restart") or {}
    if not sections:
        return None
    assumed = any("assumed" in sec for sec in sections.values())
    t = Table(title="kubelet restart (v1.37.2, kubernetes#140989): pods moved or rejected"
                    + (" (* on a node whose configuration is assumed)" if assumed else ""),
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("run", "node", "pod", "outcome", "CPUs before -> after", "reason"):
        t.add_column(col, overflow="fold")

    def figures(lab: str, sec: Mapping[str, Any], nodes: str) -> None:
        not_replayed = f", {sec['notReplayed']} not replayed" if sec.get("notReplayed") else ""
        t.add_row(*(_cell(c) for c in (
            lab, f"{sec['nodes']} {nodes}{not_replayed}",
            f"{sec['kept']} kept, {sec['moved']} moved, {sec['rejected']} rejected",
            f"{sec['cpusTakenByNobody']} CPUs taken by nobody",
            f"{len(sec['nodesThatWouldNotStartAgain'])} nodes would not start again", "")))

    for lab, sec in sections.items():
        figures(lab, sec, "nodes")
        if "assumed" in sec:
            figures(lab, sec["assumed"], "nodes assumed *")
        for p in sec["pods"]:
            cpus = f"{p['before']} -> {p['after'] or '-'}"
            node = str(p["node"]) + (" *" if p.get("configAssumed") else "")
            t.add_row(_cell(lab), _text(node), _text(p["pod"]), _cell(p["outcome"]), _cell(cpus),
                      _text(p.get("reason") or ""))
    return t


def _not_rewritten(report: Mapping[str, Any]) -> Table | None:
    """Pod-level what-ifs: the pods not rewritten, grouped by reason."""
    rows: dict[tuple[str, str], int] = {}
    for lab, items in (report.get("notRewritten") or {}).items():
        for r in items:
            key = (lab, str(r["reason"]))
            rows[key] = rows.get(key, 0) + 1
    if not rows:
        return None
    t = Table(title="pods not rewritten pod-level, and why", box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("run", "pods", "reason"):
        t.add_column(col, justify="right" if col == "pods" else "left", overflow="fold")
    for (lab, reason), count in sorted(rows.items()):
        t.add_row(*(_cell(c) for c in (lab, str(count), reason)))
    return t


def _changed_pods(report: Mapping[str, Any], limit: int = 30) -> RenderableType | None:
    """The ``gates`` what-ifs: the pods that behave otherwise, and how."""
    rows = [(lab, r) for lab, items in (report.get("changedPods") or {}).items() for r in items]
    if not rows and not report.get("changedPods"):
        return None
    labels = ", ".join(report.get("changedPods") or {})
    t = Table(title=Text(inert(f"pods that change when the gates are on ({labels}): {len(rows)}"), style="table.title"),
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("node", "pod", "change"):
        t.add_column(col, overflow="fold")
    for _, r in rows[:limit]:
        t.add_row(_cell(str(r["node"])), _cell(str(r["pod"])), _cell("; ".join(r["changes"])))
    if len(rows) > limit:
        return Group(t, Text(f"... and {len(rows) - limit} more (see -o json)"))
    return t


def _issues(issues: Sequence[Mapping[str, Any]], limit: int = 20) -> RenderableType | None:
    shown = [i for i in issues if i["severity"] != "info"]
    if not shown:
        return None
    t = Table(title=f"input issues ({len(shown)})", box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("severity", "node", "where", "message"):
        t.add_column(col, overflow="fold")  # (wrapped, never cut short with "…")
    for i in shown[:limit]:
        where = ": ".join(p for p in (i.get("file"), i.get("path")) if p)
        t.add_row(_cell(i["severity"]), *(_text(c) for c in (i.get("node") or "-", where or "-", i["message"])))
    if len(shown) > limit:
        return Group(t, Text(f"... and {len(shown) - limit} more (see -o json)"))
    return t


def headline(report: Mapping[str, Any]) -> str:
    """The report's first line: nodes, their status, the pods replayed (and
    how many of them the totals hold)."""
    f = report["fleet"]
    st = f["nodeStatus"]
    text = (f"{f['nodes']} nodes ({st.get('ok', 0)} ok, {st.get('warning', 0)} with warnings, "
            f"{st.get('error', 0)} not replayed), {f['podsReplayed']} pods replayed")
    if f.get("nodesAssumed"):
        text += (f": {f['podsInTotals']} in the totals, {f['podsOnAssumedNodes']} on "
                 f"{f['nodesAssumed']} node(s) whose configuration is assumed")
    dup = int(f.get("podsDumpedTwice") or 0)
    if dup:
        text += f" ({dup} pod(s) found in two dumps, counted once)"
    return text


def fleet_tables(report: Mapping[str, Any], *, top: int = 15) -> RenderableType:
    parts: list[RenderableType] = [_cell(headline(report))]
    if report["whatIfs"]:
        parts.append(_cell("what-ifs: " + "; ".join(f"({i}) {w}" for i, w in enumerate(report["whatIfs"], 1))))
    parts.append(_summary(report))
    if report["whatIfs"]:
        parts.append(Text("\n".join(inert(freed_line(report, w)) for w in report["whatIfs"]) + "\n"))
    assumed = _assumed(report)
    if assumed is not None:
        parts.append(assumed)
    parts.extend([_workloads(report), _nodes(report, top)])
    sections = (
        _rejected(report), _restart(report), _not_rewritten(report), _changed_pods(report),
        _issues(report["issues"]),
    )  # fmt: skip
    parts.extend(s for s in sections if s is not None)  # each only when it has rows
    return Group(*parts)

"""The self-contained HTML report of ``podnuma fleet analyze -o html``.

One file, no network: plotly's JavaScript is inlined once, the charts are
plotly figures (fleet CPUs by use as running and under each what-if;
CPUs pinned only to sidecars per node; density per workload), the node
table sorts on a click on its headers, and each drilled-down node shows its
figures, its NUMA nodes, the pods it rejects, its kubelet restart outcome
(``--what-if ...,restart``) and its topology picture (the SVG of ``podnuma
topology``: every CPU coloured by its owner). The restart section reads
the report's ``restart`` part: per run, the figures of a kubelet restart
and the pods it moves or rejects.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.render.fleet import BASELINE, METRICS, free_cell, freed_line, headline

__all__ = ["render_html", "warm_up"]


@functools.cache
def _plotly_js() -> str:
    """plotly's script, read from its package once per process."""
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs())


def warm_up() -> None:
    """Draw every kind of chart once and read plotly's script, so that a
    process that may open no file afterwards (a web job) finds plotly's
    lazily loaded parts already imported and its script in memory."""
    what_if = "what-if"
    metrics = {"exclusiveCpus": 1, "sidecarOnlyCpus": 1, "strandedCpus": 0, "freeCpus": 1,
               "reservedCpus": 0}
    _charts({
        "whatIfs": [what_if],
        "summary": {BASELINE: metrics, what_if: metrics},
        "nodes": [{"baseline": metrics, "whatIfs": {what_if: metrics}}],
        "workloads": {"w": {BASELINE: {"copies": 1}, what_if: {"copies": 2}}},
    })
    _plotly_js()

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f4f4f4;position:sticky;top:0}
td.l,th.l{text-align:left}
table.sortable th{cursor:pointer}table.sortable th:after{content:" \\2195";color:#aaa}
.err{color:#b00020}.warn{color:#a15c00}.pos{color:#1b7a1b}.neg{color:#b00020}
details{margin:6px 0;border:1px solid #ddd;border-radius:4px;padding:4px 10px}
summary{cursor:pointer;font-weight:600}
.pic{overflow:auto;max-width:100%}
.note{color:#555;font-size:13px}
"""

_SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var body=t.tBodies[0],rows=Array.from(body.rows),asc=th.dataset.asc!=='1';
      t.querySelectorAll('th').forEach(function(h){h.dataset.asc=''});th.dataset.asc=asc?'1':'0';
      rows.sort(function(a,b){
        var x=a.cells[i].dataset.v!==undefined?a.cells[i].dataset.v:a.cells[i].textContent;
        var y=b.cells[i].dataset.v!==undefined?b.cells[i].dataset.v:b.cells[i].textContent;
        var nx=parseFloat(x),ny=parseFloat(y);
        var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:String(x).localeCompare(String(y));
        return asc?c:-c;});
      rows.forEach(function(r){body.appendChild(r)});});});});
"""


def _e(v: object) -> str:
    return html.escape(str(v))


def _anchor(name: str) -> str:
    return "node-" + "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)


def _charts(report: Mapping[str, Any]) -> list[str]:
    import plotly.graph_objects as go
    import plotly.io as pio

    labels = [BASELINE, *report["whatIfs"]]
    summ = report["summary"]
    fig = go.Figure()
    for key, name, color in (
        ("exclusiveCpus", "exclusive (pinned)", "#4c78a8"),
        ("sidecarOnlyCpus", "of which sidecars only", "#e45756"),
        ("strandedCpus", "stranded", "#b279a2"),
        ("freeCpus", "free (shared pool)", "#72b7b2"),
        ("reservedCpus", "reserved", "#9d9d9d"),
    ):
        fig.add_bar(name=name, x=labels, y=[summ[lab].get(key, 0) for lab in labels], marker_color=color)
    fig.update_layout(barmode="group", title="Fleet CPUs by use", height=380,
                      margin={"l": 40, "r": 10, "t": 50, "b": 40})
    out = [pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id="chart-cpus")]

    nodes = [n for n in report["nodes"] if "baseline" in n]
    if nodes:
        fig2 = go.Figure()
        runs: list[tuple[str, list[int]]] = [
            (BASELINE, [int(n["baseline"]["sidecarOnlyCpus"]) for n in nodes])]
        for lab in report["whatIfs"]:
            runs.append((lab, [int(n["whatIfs"][lab]["sidecarOnlyCpus"]) for n in nodes
                               if "error" not in n.get("whatIfs", {}).get(lab, {"error": 1})]))
        values = sorted({v for _, vals in runs for v in vals})
        for lab, vals in runs:
            fig2.add_bar(name=lab, x=[str(v) for v in values], y=[vals.count(v) for v in values])
        fig2.update_layout(barmode="group", title="CPUs pinned only to sidecars, per node",
                           xaxis_title="CPUs pinned only to sidecars", yaxis_title="nodes",
                           xaxis_type="category", height=340,
                           margin={"l": 40, "r": 10, "t": 50, "b": 40})
        out.append(pio.to_html(fig2, full_html=False, include_plotlyjs=False, div_id="chart-sidecars"))

    wl = report["workloads"]
    if wl:
        fig3 = go.Figure()
        names = list(wl)
        for lab in labels:
            fig3.add_bar(name=lab, x=names, y=[(wl[n].get(lab) or {}).get("copies", 0) for n in names])
        fig3.update_layout(barmode="group", title="Density: copies of each workload that fit "
                           "(empty nodes, summed over the nodes running it)", height=380,
                           margin={"l": 40, "r": 10, "t": 50, "b": 80})
        out.append(pio.to_html(fig3, full_html=False, include_plotlyjs=False, div_id="chart-density"))
    return out


def _summary_table(report: Mapping[str, Any]) -> str:
    labels = [BASELINE, *report["whatIfs"]]
    summ = report["summary"]
    head = "".join(f"<th>{_e(lab if lab == BASELINE else f'({i}) {lab}')}</th>"
                   for i, lab in enumerate(labels))
    rows = []
    for key, label in METRICS:
        base = int(summ[BASELINE].get(key, 0))
        cells = []
        for lab in labels:
            v = int(summ[lab].get(key, 0))
            # the change over the nodes the what-if replayed (older reports: the difference)
            d = int((summ[lab].get("change") or {}).get(key, v - base)) if lab != BASELINE else 0
            extra = ""
            if d:
                good = d < 0 if key in ("exclusiveCpus", "sidecarOnlyCpus", "strandedCpus", "rejected",
                                        "spanningPods", "rejectedPodCpus") else d > 0
                turned = (summ[lab].get("freedForOtherPods") or {}).get("nodesRejectingRunningPods")
                if key == "freeCpus" and (turned or int((summ[lab].get("change") or {}).get("rejected", 0)) > 0):
                    good = False  # CPUs of pods turned away are no gain
                extra = f' <span class="{"pos" if good else "neg"}">({d:+d})</span>'
            cells.append(f"<td>{v}{extra}</td>")
        rows.append(f"<tr><td class=l>{_e(label)}</td>{''.join(cells)}</tr>")
    if report["whatIfs"] and all("freedForOtherPods" in summ[w] for w in report["whatIfs"]):
        cells = ["<td>-</td>"] + [f"<td>{int(summ[w]['freedForOtherPods']['cpus']):+d}</td>"
                                  for w in report["whatIfs"]]
        rows.append(f"<tr><td class=l>CPUs freed for other pods</td>{''.join(cells)}</tr>")
    notes = "".join(f"<p class=note>{_e(freed_line(report, w))}</p>" for w in report["whatIfs"]
                    if "freedForOtherPods" in summ[w])
    return (f"<table><thead><tr><th class=l></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + notes)


def _assumed_table(report: Mapping[str, Any]) -> str:
    rows = (report.get("assumed") or {}).get("nodes") or []
    if not rows:
        return ""
    by_name = {str(n["name"]): n for n in report["nodes"]}
    body = []
    for a in rows:
        b = by_name[str(a["name"])]["baseline"]
        found = a.get("contradictions") or []
        body.append(f"<tr><td class=l>{_e(a['name'])}</td><td>{b['pods']}</td><td>{b['cpus']}</td>"
                    f"<td>{b['exclusiveCpus']}</td><td>{b['freeCpus']}</td>"
                    f"<td class=l>{_e('; '.join(found) if found else 'nothing in the dumps')}</td></tr>")
    return ("<h2>Nodes whose configuration is assumed</h2><p class=note>No configz and no node group "
            "gave their kubelet configuration: replayed under the kubelet's defaults, and not in the "
            "totals above.</p><table id=assumed><thead><tr><th class=l>node</th><th>pods</th><th>CPUs</th>"
            "<th>exclusive</th><th>free</th><th class=l>what contradicts the assumption</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _changed_pods_table(report: Mapping[str, Any]) -> str:
    """The ``gates`` what-ifs: every pod that behaves otherwise once the
    gates are on, and how (the table's and JSON's ``changedPods``)."""
    changed = report.get("changedPods") or {}
    if not changed:
        return ""
    rows = [
        f"<tr><td class=l>{_e(lab)}</td><td class=l>{_e(r['node'])}</td><td class=l>{_e(r['pod'])}</td>"
        f"<td class=l>{_e('; '.join(r['changes']))}</td></tr>"
        for lab, items in changed.items() for r in items
    ]
    labels = ", ".join(changed)
    return (f"<h2>Pods that change when the gates are on ({_e(labels)}): {len(rows)}</h2>"
            "<p class=note>Pods that already set <code>spec.resources</code> and are admitted otherwise "
            "once the pod-level gates are on, their specs unchanged.</p>"
            + ("<table class=sortable id=changed-pods><thead><tr><th class=l>run</th><th class=l>node</th>"
               "<th class=l>pod</th><th class=l>change</th></tr></thead><tbody>" + "".join(rows)
               + "</tbody></table>" if rows else "<p>none</p>"))


def _workload_table(report: Mapping[str, Any]) -> str:
    labels = [BASELINE, *report["whatIfs"]]
    head = "".join(f"<th>{_e(lab)}</th>" for lab in labels)
    rows = []
    for name, w in report["workloads"].items():
        cells = []
        for lab in labels:
            d = w.get(lab)
            cells.append("<td>-</td>" if d is None else
                         f"<td data-v='{d['copies']}'>{d['copies']} [{d['min']}-{d['max']}]</td>")
        rows.append(f"<tr><td class=l>{_e(name)}</td><td class=l>{_e(w['kind'])}</td>"
                    f"<td>{w['nodes']}</td>{''.join(cells)}</tr>")
    return (f"<table class=sortable><thead><tr><th class=l>workload</th><th class=l>kind</th>"
            f"<th>nodes</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _node_table(report: Mapping[str, Any], drilled: set[str]) -> str:
    whatifs = report["whatIfs"]
    cols = ["node", "status", "type", "cpu / topology", "pods", "CPUs", "exclusive", "sidecar-only",
            "stranded", "free", "spanning"] + [f"free ({i}) {w}" for i, w in enumerate(whatifs, 1)] + \
        [f"rejected ({i}) {w}" for i, w in enumerate(whatifs, 1)]
    head = "".join(f"<th class={'l' if i < 4 else 'r'}>{_e(c)}</th>" for i, c in enumerate(cols))
    rows = []
    for n in report["nodes"]:
        name = str(n["name"])
        link = f"<a href='#{_anchor(name)}'>{_e(name)}</a>" if name in drilled else _e(name)
        status = str(n["status"])
        cls = {"error": "err", "warning": "warn"}.get(status, "")
        cfg = n.get("config", {})
        b = n.get("baseline")
        cells = [f"<td class=l>{link}</td>", f"<td class='l {cls}'>{_e(status)}</td>",
                 f"<td class=l>{_e(n['labels'].get('node.kubernetes.io/instance-type', '-'))}</td>",
                 f"<td class=l>{_e(cfg.get('cpuManagerPolicy', '-'))} / "
                 f"{_e(cfg.get('topologyManagerPolicy', '-'))}</td>"]
        if b is None:
            cells.extend("<td>-</td>" for _ in range(len(cols) - 4))
        else:
            for key in ("pods", "cpus", "exclusiveCpus", "sidecarOnlyCpus", "strandedCpus", "freeCpus"):
                cells.append(f"<td>{b[key]}</td>")
            cells.append(f"<td>{len(b['spanningPods'])}</td>")
            for w in whatifs:
                run = n.get("whatIfs", {}).get(w, {})
                cells.append("<td class=err>error</td>" if "error" in run else
                             f"<td data-v='{run.get('freeCpus', 0)}'>{_e(free_cell(b, run))}</td>")
            for w in whatifs:
                run = n.get("whatIfs", {}).get(w, {})
                cells.append("<td>-</td>" if "error" in run else f"<td>{len(run.get('rejected', []))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (f"<table class=sortable id=nodes><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


#: (key, label) of a restart section's figures, in the order shown; a key
#: the report adds later is shown after them under its own name
_RESTART_FIGURES: tuple[tuple[str, str], ...] = (
    ("nodes", "nodes restarted"),
    ("notReplayed", "nodes where the restart is not replayed"),
    ("kept", "pods kept"),
    ("moved", "pods moved"),
    ("rejected", "pods rejected"),
    ("unknown", "pods of unknown outcome"),
    ("cpusTakenByNobody", "CPUs taken by nobody"),
)
#: the keys of a restart section that are not a figure of their own
_RESTART_LISTS = ("pods", "nodesThatWouldNotStartAgain")


def _run_label(report: Mapping[str, Any], lab: str) -> str:
    whatifs = list(report["whatIfs"])
    return f"({whatifs.index(lab) + 1}) {lab}" if lab in whatifs else lab


def _value(v: object) -> str:
    """A figure as text: a scalar as is, anything else as its JSON."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return "-" if v is None else str(v)
    return json.dumps(v, sort_keys=True)


def _restart_runs(report: Mapping[str, Any]) -> list[str]:
    """The runs of the report's ``restart`` part: as running first (when the
    restart runs on it), then the what-ifs in command-line order."""
    sections = report.get("restart") or {}
    order = [BASELINE, *report["whatIfs"]]
    return [lab for lab in order if lab in sections] + [str(k) for k in sections if k not in order]


def _pod_cpus(p: Mapping[str, Any]) -> str:
    return f"{_value(p.get('before'))} -> {_value(p.get('after'))}"


def _restart_table(report: Mapping[str, Any], drilled: set[str]) -> str:
    """``--what-if ...,restart``: per run, the figures of a kubelet restart
    on its nodes (the table's and JSON's ``restart``), then the pods it
    moves or rejects with the kubelet's reason."""
    sections: Mapping[str, Any] = report.get("restart") or {}
    runs = _restart_runs(report)
    if not runs:
        return ""
    secs = [sections[lab] for lab in runs]
    head = "".join(f"<th>{_e(_run_label(report, lab))}</th>" for lab in runs)
    known = [k for k, _ in _RESTART_FIGURES]
    extra = list(dict.fromkeys(str(k) for sec in secs for k in sec
                               if k not in known and k not in _RESTART_LISTS and k != "assumed"))
    rows = []
    for key, label in [*_RESTART_FIGURES, *((k, k) for k in extra)]:
        if not any(key in sec for sec in secs):
            continue
        cells = "".join(f"<td data-key='{_e(key)}'>{_e(_value(sec.get(key, '-')))}</td>" for sec in secs)
        rows.append(f"<tr><td class=l>{_e(label)}</td>{cells}</tr>")
    starts = []
    for sec in secs:
        fails = [str(x) for x in sec.get("nodesThatWouldNotStartAgain") or []]
        starts.append("<td data-key=nodesThatWouldNotStartAgain>yes</td>" if not fails else
                     f"<td class='l err' data-key=nodesThatWouldNotStartAgain>no, on {len(fails)} node(s): "
                     f"{_e(', '.join(fails))}</td>")
    rows.append(f"<tr><td class=l>the kubelet starts again</td>{''.join(starts)}</tr>")
    if any(sec.get("assumed") for sec in secs):  # (apart from the figures above, as every total)
        cells = "".join(f"<td class=l data-key=assumed>{_e(_assumed_words(sec.get('assumed')))}</td>" for sec in secs)
        rows.append(f"<tr><td class=l>nodes with an assumed configuration *</td>{cells}</tr>")
    pods = []
    for lab, sec in zip(runs, secs, strict=True):
        for p in sec.get("pods") or []:
            node = str(p.get("node", "-"))
            link = f"<a href='#{_anchor(node)}'>{_e(node)}</a>" if node in drilled else _e(node)
            behind = f" (left behind: {_e(p['leftBehind'])})" if p.get("leftBehind") else ""
            pods.append(
                f"<tr><td class=l>{_e(_run_label(report, lab))}</td><td class=l>{link}</td>"
                f"<td class=l>{_e(p.get('pod', '-'))}</td><td class=l>{_e(p.get('outcome', '-'))}</td>"
                f"<td class=l>{_e(_pod_cpus(p))}{behind}</td><td class=l>{_e(p.get('reason') or '')}</td>"
                f"<td class=l>{_e(p.get('message') or '')}</td></tr>")
    return (
        "<h2>Kubelet restart (v1.37.2, kubernetes#140989)</h2>"
        "<p class=note>The pods of each run admitted as in the run, then the kubelet restarted: the pods "
        "that keep their CPUs, the pods it moves or rejects, the CPUs no pod takes afterwards, and whether "
        "the kubelet starts again from the state it leaves.</p>"
        f"<table id=restart><thead><tr><th class=l></th>{head}</tr></thead><tbody>{''.join(rows)}"
        "</tbody></table>"
        "<p>pods moved or rejected at the restart</p>"
        + ("<table class=sortable id=restart-pods><thead><tr><th class=l>run</th><th class=l>node</th>"
           "<th class=l>pod</th><th class=l>outcome</th><th class=l>CPUs before -&gt; after</th>"
           "<th class=l>reason</th><th class=l>message</th></tr></thead><tbody>" + "".join(pods)
           + "</tbody></table>" if pods else "<p>none</p>"))


def _assumed_words(a: Any) -> str:
    """The restart figures of the nodes whose configuration is assumed."""
    if not isinstance(a, Mapping) or not a.get("nodes"):
        return "-"
    fails = [str(x) for x in a.get("nodesThatWouldNotStartAgain") or []]
    return (f"{_value(a.get('nodes'))} node(s): {_value(a.get('kept', 0))} kept, {_value(a.get('moved', 0))} moved, "
            f"{_value(a.get('rejected', 0))} rejected, {_value(a.get('unknown', 0))} unknown; "
            f"{_value(a.get('cpusTakenByNobody', 0))} CPUs taken by nobody; "
            + ("the kubelet starts again" if not fails else f"would not start again on {', '.join(fails)}"))


def _node_restart(lab: str, r: Mapping[str, Any]) -> str:
    """A node's restart outcome under one run (its ``restart`` in the JSON)."""
    if "error" in r:
        return f"<p class=err>{_e(lab)}: kubelet restart: {_e(r['error'])}</p>"
    pods = ", ".join(f"{_e(_value(r[k]))} {k}" for k in ("kept", "moved", "rejected", "unknown") if k in r)
    figures = "; ".join(x for x in (
        f"pods {pods}" if pods else "",
        f"{_e(_value(r['cpusTakenByNobody']))} CPUs taken by nobody" if "cpusTakenByNobody" in r else "",
        *(f"{_e(k)}: {_e(_value(v))}" for k, v in r.items()
          if k not in ("kept", "moved", "rejected", "unknown", "cpusTakenByNobody", "nextStartFails", "pods")),
    ) if x)
    fails = r.get("nextStartFails")
    start = ("the kubelet starts again" if not fails else
             f"<span class=err>the kubelet would not start again: {_e(_value(fails))}</span>")
    items = "".join(
        f"<li>{_e(p.get('pod', '-'))}: {_e(p.get('outcome', '-'))}, CPUs {_e(_pod_cpus(p))}"
        + (f" (left behind: {_e(p['leftBehind'])})" if p.get("leftBehind") else "")
        + (f": {_e(p['reason'])}" if p.get("reason") else "")
        + (f": {_e(p['message'])}" if p.get("message") else "") + "</li>"
        for p in r.get("pods") or [])
    return (f"<p class=restart>{_e(lab)}: kubelet restart: {figures}; {start}</p>"
            + (f"<ul>{items}</ul>" if items else ""))


def _drilldown(n: Mapping[str, Any], svg: str | None, whatifs: Sequence[str]) -> str:
    name = str(n["name"])
    parts = [f"<details id='{_anchor(name)}'><summary>{_e(name)} &mdash; {_e(n['status'])}</summary>"]
    parts.append(f"<p class=note>configuration: {_e(n.get('configSource', ''))}<br>"
                 f"topology: {_e(n.get('topologySource', '') or '-')}</p>")
    m = n.get("machine")
    if m:
        parts.append(f"<p class=note>{m['cpus']} CPUs, {m['numaNodes']} NUMA node(s), {m['sockets']} "
                     f"socket(s), {m['threadsPerCore']} thread(s) per core; "
                     f"{_e(json.dumps(n.get('config', {}), sort_keys=True))}</p>")
    b = n.get("baseline")
    if b:
        rows = "".join(
            f"<tr><td>{r['id']}</td><td>{r['cpus']}</td><td>{r['exclusive']}</td><td>{r['free']}</td>"
            f"<td>{r.get('memoryFree', '-')}</td></tr>" for r in b["numa"])
        parts.append("<table><thead><tr><th>NUMA</th><th>CPUs</th><th>exclusive</th><th>free</th>"
                     f"<th>memory free (bytes)</th></tr></thead><tbody>{rows}</tbody></table>")
        runs = [(BASELINE, b)] + [(w, n.get("whatIfs", {}).get(w, {})) for w in whatifs]
        for lab, run in runs:
            if "error" in run:
                parts.append(f"<p class=err>{_e(lab)}: {_e(run['error'])}</p>")
            elif run.get("rejected"):
                items = "".join(f"<li>{_e(r['pod'])}: {_e(r['reason'])}: {_e(r['message'])}</li>"
                                for r in run["rejected"])
                parts.append(f"<p>{_e(lab)}: rejected pods</p><ul>{items}</ul>")
        for lab, run in runs:
            if "error" not in run and isinstance(run.get("restart"), Mapping):
                parts.append(_node_restart(lab, run["restart"]))
        if b.get("density"):
            items = "".join(f"<li>{_e(k)}: {d['copies']} copies</li>" for k, d in b["density"].items())
            parts.append(f"<p>density on an empty node like this one:</p><ul>{items}</ul>")
    issues = [i for i in n.get("issues", [])]
    if issues:
        items = "".join(f"<li class={'err' if i['severity'] == 'error' else 'warn'}>{_e(i['severity'])}: "
                        f"{_e(i['message'])}</li>" for i in issues)
        parts.append(f"<ul>{items}</ul>")
    if svg:
        parts.append(f"<div class=pic>{svg}</div>")
    parts.append("</details>")
    return "".join(parts)


def render_html(
    report: Mapping[str, Any], pictures: Mapping[str, str], *, drill: Sequence[str] | None = None,
    title: str = "podnuma fleet report",
) -> str:
    """The report as one HTML document. ``pictures``: node name -> SVG;
    ``drill``: the nodes that get a drill-down section (default: all)."""
    drilled = list(drill) if drill is not None else [str(n["name"]) for n in report["nodes"]]
    drill_set = set(drilled)
    by_name = {str(n["name"]): n for n in report["nodes"]}
    issues = [i for i in report["issues"] if i["severity"] != "info"]
    issue_rows = "".join(
        f"<tr><td class='l {'err' if i['severity'] == 'error' else 'warn'}'>{_e(i['severity'])}</td>"
        f"<td class=l>{_e(i.get('node') or '-')}</td><td class=l>{_e(i.get('file') or '-')}</td>"
        f"<td class=l>{_e(i['message'])}</td></tr>" for i in issues[:500])
    more = f"<p class=note>... and {len(issues) - 500} more in the JSON report</p>" if len(issues) > 500 else ""
    rej_rows = []
    for lab, items in report["rejected"].items():
        counts: dict[tuple[str, str, str], int] = {}
        for r in items:
            k = (str(r.get("workload") or r["pod"]), str(r["reason"]), str(r.get("message") or ""))
            counts[k] = counts.get(k, 0) + 1
        for (w, reason, msg), c in sorted(counts.items()):
            rej_rows.append(f"<tr><td class=l>{_e(lab)}</td><td class=l>{_e(w)}</td><td>{c}</td>"
                            f"<td class=l>{_e(reason)}</td><td class=l>{_e(msg)}</td></tr>")
    charts = "".join(_charts(report))
    body = [
        f"<h1>{_e(title)}</h1>",
        f"<p>{_e(headline(report))}, in start order through the kubelet v1.37 resource managers; "
        f"what-ifs: {_e('; '.join(f'({i}) {w}' for i, w in enumerate(report['whatIfs'], 1)) or 'none')}.</p>",
        "<h2>Fleet</h2>", _summary_table(report), _assumed_table(report), charts,
        "<h2>Density per workload</h2>",
        "<p class=note>Copies of each Guaranteed workload that fit on an empty node of the same shape "
        "and configuration, summed over the nodes that run it [min-max per node].</p>",
        _workload_table(report),
        "<h2>Pods that would be rejected</h2>",
        ("<table><thead><tr><th class=l>run</th><th class=l>workload</th><th>pods</th>"
         "<th class=l>reason</th><th class=l>message</th></tr></thead><tbody>"
         + "".join(rej_rows) + "</tbody></table>") if rej_rows else "<p>none</p>",
        _restart_table(report, drill_set),
        _changed_pods_table(report),
        "<h2>Nodes</h2><p class=note>Click a header to sort; click a node for its drill-down.</p>",
        _node_table(report, drill_set),
        "<h2>Input issues</h2>",
        ("<table><thead><tr><th class=l>severity</th><th class=l>node</th><th class=l>file</th>"
         f"<th class=l>message</th></tr></thead><tbody>{issue_rows}</tbody></table>{more}")
        if issues else "<p>none</p>",
        "<h2>Node drill-down</h2>",
        "".join(_drilldown(by_name[name], pictures.get(name), report["whatIfs"])
                for name in drilled if name in by_name),
    ]
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{_e(title)}</title><style>{_CSS}</style>"
        f"<script type='text/javascript'>{_plotly_js()}</script></head><body>"
        + "\n".join(body)
        + f"<script>{_SORT_JS}</script></body></html>\n"
    )

"""An explanation document (:mod:`podnuma.analysis.explain`) for people."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from podnuma.fieldkit import inert
from podnuma.render.wrap import cpu_list, name, spread_width, words
from podnuma.scenario.run import RunResult
from podnuma.units import format_bytes as _size
from podnuma.units import format_nodes as _nodes

__all__ = ["admission_pictures", "render_text"]

_SOURCE_TEXT = {"pod-level": "from the pod-level spec.resources", "containers": "from the containers' resources"}


def _hint_text(hint: Mapping[str, Any]) -> str:
    nodes = hint["numaNodes"]
    mark = "preferred" if hint["preferred"] else "not preferred"
    return f"{_nodes(nodes)} ({mark})"



def _hints_cell(hints: list[dict[str, Any]] | None, meaning: str) -> str:
    if hints is None or not hints:
        return meaning
    return "  ".join(
        "{" + _nodes(h["numaNodes"]) + "}" + ("✓" if h["preferred"] else "✗") for h in hints
    )


def _say(console: Console, line: str) -> None:
    """Print one line literally: its control characters escaped
    (:func:`~podnuma.fieldkit.inert`), never read as rich markup nor
    highlighted -- the line holds names from the scenario (a node, a pod, a
    file), which may contain ``[`` ... ``]``."""
    console.print(Text(inert(line)), highlight=False)


def _mem_text(blocks: list[dict[str, Any]]) -> str:
    if not blocks:
        return "-"
    return ", ".join(f"{b['type']} {_size(b['size'])} @{_nodes(b['numaNodes'])}" for b in blocks)


def render_text(
    doc: Mapping[str, Any], console: Console, *, pictures: Mapping[int, str] | None = None
) -> None:
    """Print an explanation document for people; ``pictures`` (by step
    index) are the topology pictures to show after their admissions."""
    node = doc["node"]
    cfg = doc["config"]
    _say(
        console,
        f"node {node['name']}   CPUs {node['cpus']}   NUMA nodes {_nodes(node['numaNodes'])}   "
        f"reserved {node['reservedCpus'] or '-'}   ({doc['scenario']})",
    )
    opts = cfg["topologyManagerPolicyOptions"]
    cpu_opts = cfg["cpuManagerPolicyOptions"]
    _say(
        console,
        f"topology manager {cfg['topologyManagerPolicy']}, scope {cfg['topologyManagerScope']}"
        + (f" ({', '.join(f'{k}={v}' for k, v in opts.items())})" if opts else "")
        + f"; CPU manager {cfg['cpuManagerPolicy']}"
        + (f" ({', '.join(f'{k}={v}' for k, v in cpu_opts.items())})" if cpu_opts else "")
        + f"; memory manager {cfg['memoryManagerPolicy']}",
    )
    if not doc["admissions"]:
        _say(console, "no admission matches")
    for adm in doc["admissions"]:
        _render_admission(adm, console, (pictures or {}).get(adm["step"]))


def _render_admission(adm: Mapping[str, Any], console: Console, picture: str | None) -> None:
    console.print()
    verdict = (
        Text("✓ admitted", style="green")
        if adm["admitted"]
        else Text(inert(f"✗ rejected: {adm['reason']}"), style="bold red")
    )
    head = Text(inert(f"step {adm['step']}  {adm['pod']}  "), style="bold")
    head.append(verdict)
    if head.cell_len + 6 <= console.width:
        console.rule(head, align="left")
    else:  # (a rule cuts its title to one line: the verdict would be lost)
        console.print(head, overflow="fold")
        console.rule()
    qos = adm["qos"]
    src = f" ({_SOURCE_TEXT[qos['source']]})" if qos.get("source") in _SOURCE_TEXT else ""
    _say(console, f"QoS {qos['class']}{src}: {qos['why']}")

    topo = adm["topology"]
    if topo["note"]:
        _say(console, topo["note"])
    for merge in topo["merges"]:
        who = "the pod (pod scope)" if merge["container"] is None else f"container {merge['container']}"
        table = Table(
            title=Text(inert(f"hints for {who}"), style="table.title"), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False
        )
        table.add_column("provider")
        table.add_column("resource")
        table.add_column("hints (NUMA nodes, ✓ preferred)", overflow="fold")
        for row in merge["providers"]:
            table.add_row(*(
                Text(inert(cell))
                for cell in (row["provider"], row["resource"] or "-", _hints_cell(row["hints"], row["meaning"]))
            ))
        console.print(table)
        if merge["merged"] is not None:
            verdict_text = "admitted" if merge["admit"] else "REJECTED"
            _say(console, f"  merged: {_hint_text(merge['merged'])} -> {verdict_text}")
        for line in merge["why"]:
            _say(console, f"   • {line}")

    if adm["podAllocation"] is not None:
        pa = adm["podAllocation"]
        _say(
            console,
            f"pod reservation: CPUs {pa['cpus'] or '-'} (NUMA {_nodes(pa['cpuNumaNodes'])}), "
            f"memory {_mem_text(pa['memory'])}",
        )
    if adm["containers"]:
        ct, hidden = _containers_table(adm["containers"], console)
        console.print(ct)
        if hidden:
            _say(console, f"   (left out to fit {console.width} columns: {', '.join(hidden)}; "
                          "-o json has every field)")
        if adm["cpuPolicyRule"]:
            _say(console, f"   exclusive CPUs: {adm['cpuPolicyRule']}")
        for c in adm["containers"]:
            for line in c["why"]:
                _say(console, f"   • {c['name']}: {line}")
        _say(console, f"node shared pool after the step: {adm['defaultCpuSet'] or '-'}")

    rej = adm["rejection"]
    if rej is not None:
        console.print(Text("rejection", style="bold"))
        _say(console, f"   stage: {rej['stageText']} ({rej['who']})")
        _say(console, f"   reason: {rej['reason']}" + (f" -- {rej['meaning']}" if rej["meaning"] else ""))
        _say(console, f"   message: {rej['message']}")
    if adm["alternatives"]:
        console.print(Text("nearest admissible configuration", style="bold"))
        for alt in adm["alternatives"]:
            mark = "✓" if alt["admitted"] else ("?" if alt["admitted"] is None else "✗")
            _say(console, f"   {mark} {alt['summary']}")
            for line in _side_effect_lines(alt):
                _say(console, f"       {line}")
        if not adm["suggestions"]:
            _say(console, "   (no single change tried admits the pod)")
    _candidates_text(adm, console)
    _search_text(adm, console)
    if picture:
        console.print(Text("after the step", style="bold"))
        console.print(Text(picture), highlight=False)




#: the containers table's columns, and the order optional ones are left
#: out in when the table is wider than the console
_CONTAINER_COLUMNS = ("container", "pool", "CPUs", "NUMA", "memory", "devices", "CFS quota", "hint")
_CONTAINER_DROP = ("devices", "CFS quota", "hint", "memory")


def _container_cells(c: Mapping[str, Any]) -> dict[str, RenderableType]:
    """A container's cells, each wrapping where a reader expects it (a CPU
    list after its commas, a name at its separators, words at spaces)."""
    label = c["name"] if c["type"] == "app" else f"{c['name']} ({c['type']})"
    devices = ", ".join(f"{res}: {','.join(d['ids'])}" for res, d in c["devices"].items()) or "-"
    hint = c["topologyHint"]
    return {
        "container": name(inert(label)), "pool": words(inert(c["pool"])),
        "CPUs": cpu_list(inert(c["cpus"] or "-")), "NUMA": cpu_list(_nodes(c["cpuNumaNodes"])),
        "memory": words(inert(_mem_text(c["memory"]))), "devices": words(inert(devices)),
        "CFS quota": words(inert(c["cfsQuota"])), "hint": words("-" if hint is None else _hint_text(hint)),
    }


def _containers_table(containers: list[Mapping[str, Any]], console: Console) -> tuple[Table, list[str]]:
    """The containers table, its optional columns left out (named in the
    second result) until its narrowest layout fits the console: no word
    is cut to make it fit."""
    rows = [_container_cells(c) for c in containers]

    def build(hidden: list[str]) -> Table:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, title="containers", title_justify="left")
        shown = [col for col in _CONTAINER_COLUMNS if col not in hidden]
        for col in shown:  # (a header is not cut either)
            table.add_column(col, min_width=max(len(w) for w in col.split()))
        for cells in rows:
            table.add_row(*(cells[col] for col in shown))
        return table

    unbounded = console.options.update_width(1 << 16)
    hidden: list[str] = []
    for col in _CONTAINER_DROP:
        if Measurement.get(console, unbounded, build(hidden)).minimum <= console.width:
            break
        hidden.append(col)
    table = build(hidden)
    # rich narrows the widest columns first, below what their words need:
    # each column gets its narrowest width and the rest is shared as
    # spread_width shares it
    spans: list[Measurement] = []
    for c in table.columns:
        cells = [Measurement.get(console, unbounded, r) for r in (c.header, *c.cells)]
        low = max([c.min_width or 0, *(m.minimum for m in cells)])
        spans.append(Measurement(low, max([low, *(m.maximum for m in cells)])))
    overhead = Measurement.get(console, unbounded, table).maximum - sum(m.maximum for m in spans)
    room = console.width - overhead - sum(m.minimum for m in spans)
    more = sum(m.maximum - m.minimum for m in spans)
    if room >= 0 and room < more:
        widths = spread_width([m.minimum for m in spans], [m.maximum for m in spans], room)
        for column, w in zip(table.columns, widths, strict=True):
            column.width = w
    return table, hidden


def _side_effect_lines(alt: Mapping[str, Any]) -> list[str]:
    """What an admitting change does to the other pods, and how far that
    was followed."""
    if not alt["admitted"]:
        return []
    lines = [
        f"side effect: {e['pod']} (step {e['step']}) {e['now']} instead of {e['was']}"
        for e in alt["sideEffects"]
    ]
    checked = alt["sideEffectsCheckedSteps"]
    before = "the earlier steps and " if alt["kind"] in ("topologyPolicy", "topologyScope") else ""
    later = f"the next {checked} steps" if checked is not None else "every later step"
    if not lines:
        lines.append(f"no side effect on the other pods ({before}{later} compared)")
    else:
        lines.append(f"({before}{later} compared)")
    restart = alt.get("restart")
    if restart:
        lines.append(
            f"after a kubelet restart (v1.37.2, {restart['upstreamIssue']}), the pod alone on the node "
            f"(scope {restart['scope']}): {restart['summary']}"
        )
    return lines


def _candidates_text(adm: Mapping[str, Any], console: Console) -> None:
    """Every change the search ran, in order (smallest first), with the
    engine's verdict, and which is the nearest admitted one."""
    search = adm.get("search")
    if not search or not search.get("candidates"):
        return
    nearest = search.get("nearest")
    head = f"changes tried, smallest first ({len(search['candidates'])})"
    console.print(Text(head, style="bold"))
    for c in search["candidates"]:
        mark = "✓" if c["admitted"] else ("?" if c["admitted"] is None else "✗")
        why = "" if c["admitted"] else f" -- {c['reason']}"
        star = "  <- nearest" if c["order"] == nearest else ""
        _say(console, f"   {c['order']:>2}. {mark} [{c['family']}] {c['change']}{why}{star}")
    if nearest is None:
        _say(console, "   no change tried admits the pod")
    else:
        _say(console, f"   nearest admissible: #{nearest} {search['nearestChange']}")


def _search_text(adm: Mapping[str, Any], console: Console) -> None:
    """Where the nearest-admissible search was cut, and what it did not try."""
    search = adm.get("search")
    if not search or search["complete"]:
        return
    for cut in search["cuts"]:
        _say(console, f"   search cut: {cut}")
    not_tried = search["notTried"]
    if not_tried:
        shown = "; ".join(not_tried[:3])
        more = f" and {len(not_tried) - 3} more" if len(not_tried) > 3 else ""
        _say(console, f"   not tried: {shown}{more}")


def admission_pictures(result: RunResult, doc: Mapping[str, Any]) -> dict[int, str]:
    """The topology picture (text) after each explained admission's step."""
    from podnuma.render.picture import ownership_after
    from podnuma.render.picture import render_text as picture_text

    out: dict[int, str] = {}
    positions = {s.index: i for i, s in enumerate(result.steps)}
    for adm in doc["admissions"]:
        pos = positions.get(adm["step"])
        if pos is not None:
            out[adm["step"]] = picture_text(result.machine, ownership_after(result, pos))
    return out

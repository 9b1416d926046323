"""``podnuma compare`` for people: the two forms side by side."""

from __future__ import annotations

from collections.abc import Mapping

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from podnuma.analysis.compare import FORM_NAMES, Comparison
from podnuma.analysis.measure import Measurement
from podnuma.machine.cpuset import CPUSet
from podnuma.render.wrap import words
from podnuma.units import format_bytes as format_size

__all__ = ["comparison_renderable"]


def _cpus(count_set: CPUSet) -> str:
    n = count_set.size()
    return "0" if n == 0 else f"{n} ({count_set})"


#: cells of names and reasons: wrapped at word boundaries only (a CamelCase
#: reason wider than its column between its words), never mid-word
_WORDS = frozenset({"admitted", "nodeshared", "stop"})


def _cell(m: Measurement, what: str) -> RenderableType:
    text = _text_cell(m, what)
    return words(text) if what in _WORDS else text


def _text_cell(m: Measurement, what: str) -> Text:
    if m.startup_error is not None:
        return Text("kubelet would not start" if what == "admitted" else "-", style="red")
    if what == "qos":
        return Text(m.qos_class or "-")
    if what == "admitted":
        if m.admitted:
            return Text("yes", style="green")
        t = Text(f"no: {m.reason}", style="bold red")
        return t
    if not m.admitted:
        if what == "density":
            return Text("0", style="bold")
        return Text("-", style="dim")
    if what == "exclusive":
        return Text(_cpus(m.exclusive_cpus))
    if what == "podshared":
        return Text(_cpus(m.pod_shared_cpus))
    if what == "nodeshared":
        return Text(", ".join(m.node_shared_containers) if m.node_shared_containers else "-")
    if what == "sidecar":
        style = "yellow" if m.sidecar_only_cpus.size() else ""
        return Text(_cpus(m.sidecar_only_cpus), style=style)
    if what == "held":
        return Text(_cpus(m.held_cpus))
    if what == "memory":
        return Text(format_size(m.memory_bytes) if m.memory_bytes else "0")
    if what == "numa":
        return Text(",".join(str(n) for n in m.numa_nodes) if m.numa_nodes else "-")
    if what == "density":
        return Text(f"{m.density}" + (" (cap)" if m.density_capped else ""), style="bold")
    if what == "stop":
        return Text(m.density_stop or "-")
    raise KeyError(what)


_ROWS = (
    ("QoS class", "qos"),
    ("admitted", "admitted"),
    ("exclusive CPUs", "exclusive"),
    ("pod shared pool CPUs", "podshared"),
    ("on node shared pool", "nodeshared"),
    ("sidecar-only CPUs", "sidecar"),
    ("CPUs taken from node", "held"),
    ("memory pinned", "memory"),
    ("NUMA nodes", "numa"),
    ("density (copies)", "density"),
    ("next copy rejected", "stop"),
)



def _budget_text(budget: Mapping[str, Mapping[str, str]]) -> str:
    """The pod budget: its requests (``cpu=5, memory=4608Mi``), and its
    limits too when they are not the same."""
    requests = dict(budget.get("requests", {}))
    limits = dict(budget.get("limits", {}))

    def listed(values: Mapping[str, str]) -> str:
        return ", ".join(f"{k}={v}" for k, v in values.items()) or "-"

    if not limits or limits == requests:
        return listed(requests)
    return f"requests {listed(requests)}; limits {listed(limits)}"


def comparison_renderable(c: Comparison, *, node: str, config: str) -> RenderableType:
    head = Text()
    head.append(c.pod if " " in c.pod else f"Pod {c.pod}", style="bold")  # a workload: "Deployment ns/name"
    head.append(f"  (as written: {FORM_NAMES[c.written]}; derived: {FORM_NAMES[c.rewrite.direction]})\n")
    head.append(f"node: {node}\nkubelet config: {config}")
    table = Table(box=box.SIMPLE_HEAD, show_lines=False)
    table.add_column("", style="bold", no_wrap=True)
    for m in c.runs:
        mark = " *" if m.label == c.written else ""
        table.add_column(f"{FORM_NAMES[m.label]}{mark}\nscope {m.scope}", overflow="fold")
    for title, key in _ROWS:
        table.add_row(title, *(_cell(m, key) for m in c.runs))
    parts: list[RenderableType] = [head, table, Text("* = as written", style="dim")]

    plan = Text()
    plan.append(f"{FORM_NAMES[c.rewrite.direction]} form: ", style="bold")
    budget = _budget_text(c.rewrite.budget)
    if c.rewrite.direction == "podLevel":
        plan.append("spec.resources " + budget)
    else:
        plan.append("spec.resources removed (was " + budget + ")")
    for p in c.rewrite.containers:
        plan.append(f"\n  {p.name} ({p.type}): {p.role} - {p.why}")
    parts.append(plan)
    for m in c.runs:
        if m.startup_error is not None:
            parts.append(Text(f"{FORM_NAMES[m.label]} / scope {m.scope}: kubelet would not start: {m.startup_error}", style="red"))
    if c.notes:
        notes = Text("notes:", style="bold")
        for n in c.notes:
            notes.append(f"\n  - {n}", style="")
        parts.append(notes)
    return Group(*parts)

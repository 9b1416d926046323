"""The same pod under per-container and pod-level allocation, side by side.

Used by ``podnuma demo`` for its pod-level section: one row per container
with the CPUs, pool and memory it gets in each form, then what the node
gives up for the pod in each form (CPUs taken out of the node's shared pool,
sidecar-only CPUs: exclusive CPUs held by sidecars alone, memory pinned).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from podnuma.cm.results import ContainerResult, StepResult
from podnuma.fieldkit import inert
from podnuma.machine.cpuset import CPUSet
from podnuma.render.table import format_size, to_text
from podnuma.scenario.run import RunResult

__all__ = ["FormSummary", "pod_level_demo_text", "summarize", "side_by_side"]

_POOL = {"container": "exclusive", "pod": "pod shared pool", "host": "node shared pool"}


@dataclass(frozen=True)
class FormSummary:
    """What one form of the pod costs the node."""

    cpus_taken: CPUSet  # out of the node's shared pool: exclusive slices + pod bubble
    sidecar_only_cpus: CPUSet  # exclusive CPUs whose only tenant is a sidecar container
    memory_pinned: int


def _is_sidecar(step: StepResult, c: ContainerResult, main: str) -> bool:
    return c.type == "sidecar" or (c.type == "app" and c.name != main)


def summarize(step: StepResult, main: str) -> FormSummary:
    """``main`` names the container the pod exists for; every other
    long-running container counts as a sidecar."""
    taken = CPUSet()
    sidecar_only = CPUSet()
    memory = 0
    if step.pod_allocation is not None:
        taken = taken | step.pod_allocation.cpus
        memory = sum(b.size for b in step.pod_allocation.memory)
    for c in step.containers:
        if c.isolation == "container":
            taken = taken | c.cpus
            if _is_sidecar(step, c, main):
                sidecar_only = sidecar_only | c.cpus
        if step.pod_allocation is None:
            memory += sum(b.size for b in c.memory)
    return FormSummary(taken, sidecar_only, memory)


def _cell(c: ContainerResult | None) -> Text:
    if c is None:
        return Text("-", style="dim")
    pool = _POOL[c.isolation]
    style = {"container": "bold green", "pod": "cyan", "host": "dim"}[c.isolation]
    mem = sum(b.size for b in c.memory)
    t = Text(f"{c.cpus} ({c.cpus.size()})", style=style)
    t.append(f"\n{pool}", style="dim")
    if mem:
        t.append(f", {format_size(mem)}", style="dim")
    return t


def side_by_side(
    per_container: StepResult, pod_level: StepResult, *, main: str, title: str
) -> RenderableType:
    """The comparison table for one pod written both ways."""
    table = Table(box=box.SIMPLE_HEAD, title=Text(inert(title), style="table.title"), title_justify="left", pad_edge=False)
    table.add_column("container")
    table.add_column("per-container resources")
    table.add_column("pod-level resources (pod scope)")
    left = {c.name: c for c in per_container.containers}
    right = {c.name: c for c in pod_level.containers}
    if pod_level.pod_allocation is not None:
        alloc = pod_level.pod_allocation
        mem = sum(b.size for b in alloc.memory)
        table.add_row(
            Text("(pod budget)", style="dim"),
            Text("-", style="dim"),
            Text(f"{alloc.cpus} ({alloc.cpus.size()})\nreserved for the pod, {format_size(mem)}"),
        )
    for name in list(dict.fromkeys([*left, *right])):
        table.add_row(Text(inert(name)), _cell(left.get(name)), _cell(right.get(name)))
    a = summarize(per_container, main)
    b = summarize(pod_level, main)
    table.add_section()
    table.add_row(
        Text("CPUs taken from the node", style="bold"),
        Text(str(a.cpus_taken.size()), style="bold"),
        Text(str(b.cpus_taken.size()), style="bold"),
    )
    table.add_row(
        "sidecar-only CPUs",
        str(a.sidecar_only_cpus.size()),
        str(b.sidecar_only_cpus.size()),
    )
    table.add_row("memory pinned", format_size(a.memory_pinned), format_size(b.memory_pinned))
    saved = a.cpus_taken.size() - b.cpus_taken.size()
    note = Text(
        f"With pod-level resources the node keeps {saved} more CPU"
        f"{'' if saved == 1 else 's'} in its shared pool for the same workload."
        if saved > 0
        else "Pod-level resources take no fewer CPUs from the node for this pod.",
        style="italic",
    )
    return Group(table, note)


def pod_level_demo_text(result: RunResult) -> str:
    """The demo's pod-level section: the training pod per-container (step 0)
    and with pod-level resources (step 2), side by side, as text."""
    per_container, pod_level = result.steps[0], result.steps[2]
    heading = Text(
        "\nPod-level resource managers (KEP-5526): a training pod with three small "
        "sidecars, written two ways",
        style="bold",
    )
    table = side_by_side(
        per_container,
        pod_level,
        main="train",
        title=f"{pod_level.pod} on {result.node.name} (topology manager: restricted, pod scope)",
    )
    return to_text(Group(heading, table))

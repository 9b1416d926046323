"""``podnuma compare``: a pod as written vs its other form (KEP-5526).

For a per-container pod the other form is its pod-level form
(``spec.resources`` = the pod budget, exclusive slices kept for the main
containers, sidecars and small containers on the pod shared pool; rules in
``podnuma.whatif.rewrite``); for a pod-level pod it is the per-container
form (every container with its own share). Both forms run under topology
scope ``pod`` and ``container`` with the user's node and configuration
(topology policy kept; the pod-level form with the PodLevelResources and
PodLevelResourceManagers gates forced on, which the output says), each on
an empty node: QoS, admission, exclusive CPUs, pod shared pool, containers
on the node shared pool, CPUs only sidecars use, NUMA nodes, and density
(copies admitted until the first rejection).

:func:`compare_pod` is pure; :data:`compare_command` is the click command
(registered on ``podnuma`` in ``podnuma.cli``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import parse_pod
from podnuma.errors import InputError
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.render.table import format_size, make_console, print_renderable
from podnuma.scenario.document import dump_json
from podnuma.whatif._cli import config_option, guard, node_and_config, node_option
from podnuma.whatif.inputs import load_pod_sources, read_text
from podnuma.whatif.measure import Measurement, measure_manifest, variant_config
from podnuma.whatif.rewrite import Rewrite, has_pod_level_resources, other_form, sidecar_names

__all__ = ["Comparison", "compare_pod", "comparison_document", "compare_command", "SCOPES"]

SCOPES = ("pod", "container")


@dataclass(frozen=True)
class Comparison:
    """Both forms of one pod, measured under both scopes.

    ``runs`` are ordered per-container form (pod, container scope), then
    pod-level form (pod, container scope).
    """

    pod: str
    written: str  # "perContainer" or "podLevel": the form the file holds
    rewrite: Rewrite
    runs: tuple[Measurement, ...]
    notes: tuple[str, ...]
    original: Mapping[str, Any]

    def run(self, form: str, scope: str) -> Measurement:
        for m in self.runs:
            if m.label == form and m.scope == scope:
                return m
        raise KeyError((form, scope))


def compare_pod(
    doc: Mapping[str, Any], machine: Machine, config: KubeletConfig, *, cap: int = 512
) -> Comparison:
    """Measure ``doc`` and its other form under scopes pod and container.

    Raises ``InputError`` (the manifest is not a valid Pod; paths relative
    to ``doc``) or ``KubeletStartupError`` (the configuration cannot run).
    """
    if not isinstance(doc, Mapping):
        raise InputError("a Pod manifest must be a mapping")
    kind = doc.get("kind")
    if kind is not None and kind != "Pod":
        raise InputError(f"not a Pod (kind {kind!r})", path="kind")
    plrm_cfg, forced = variant_config(config, scope=config.topology_manager_scope, pod_level=True)
    pod = parse_pod(doc, gates=plrm_cfg.feature_gates)
    written = "podLevel" if has_pod_level_resources(doc) else "perContainer"
    rewrite = other_form(doc, pod)
    forms: dict[str, Mapping[str, Any]] = {written: doc, rewrite.direction: rewrite.manifest}
    sidecars = sidecar_names(pod)

    notes: list[str] = []
    if forced:
        notes.append(
            "pod-level form measured with feature gate(s) "
            + ", ".join(f"{g}=true" for g in forced)
            + " forced on (PodLevelResourceManagers is off by default in v1.37)"
        )
    if config.topology_manager_policy == "none":
        notes.append(
            "topology policy none: the kubelet aligns nothing and the scope makes no difference"
        )
    if config.cpu_manager_policy != "static":
        notes.append(f"CPU manager policy {config.cpu_manager_policy}: no exclusive CPUs at all")
    notes.append(
        f"topology policy {config.topology_manager_policy} kept; scope set to pod and to container "
        f"(configured: {config.topology_manager_scope})"
    )

    runs: list[Measurement] = []
    for form in ("perContainer", "podLevel"):
        for scope in SCOPES:
            try:
                m = measure_manifest(
                    machine, config, forms[form], label=form, scope=scope,
                    pod_level=(form == "podLevel"), sidecars=sidecars, cap=cap,
                )
            except InputError as e:
                if form == written:
                    raise
                raise InputError(f"the derived {form} form is not a valid pod: {e}") from None
            runs.append(m)
    notes.extend(rejection_notes(runs))
    return Comparison(
        pod=pod.ref,
        written=written,
        rewrite=rewrite,
        runs=tuple(runs),
        notes=tuple(notes) + rewrite.notes,
        original=doc,
    )


#: Rejections that just mean "the node is full".
CAPACITY_REASONS = frozenset({"OutOfcpu", "OutOfmemory", "OutOfpods", "TopologyAffinityError"})


def rejection_notes(runs: list[Measurement]) -> list[str]:
    """Explain rejections (of the pod or of a later copy) that are not the
    node simply being full."""
    out: list[str] = []
    for m in runs:
        if m.startup_error is not None:
            continue
        which = f"{_FORM_NAMES[m.label]} / scope {m.scope}"
        reason, message = m.density_stop, m.density_stop_message
        copy = f"copy {m.density + 1}" if m.admitted else "the pod"
        if reason is None or reason in CAPACITY_REASONS and m.admitted:
            continue
        out.append(f"{which}: {copy} rejected: {reason}: {message}")
    return out


# --------------------------------------------------------------------------
# output


def comparison_document(c: Comparison) -> dict[str, Any]:
    return {
        "pod": c.pod,
        "asWritten": c.written,
        "derived": {
            "form": c.rewrite.direction,
            "budget": {k: dict(v) for k, v in c.rewrite.budget.items()},
            "containers": [
                {"name": p.name, "type": p.type, "role": p.role, "why": p.why}
                for p in c.rewrite.containers
            ],
            "manifest": c.rewrite.manifest,
        },
        "runs": [m.as_dict() for m in c.runs],
        "notes": list(c.notes),
    }


def _cpus(count_set: CPUSet) -> str:
    n = count_set.size()
    return "0" if n == 0 else f"{n} ({count_set})"


def _cell(m: Measurement, what: str) -> Text:
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

_FORM_NAMES = {"perContainer": "per-container", "podLevel": "pod-level"}


def comparison_renderable(c: Comparison, *, node: str, config: str) -> RenderableType:
    head = Text()
    head.append(f"Pod {c.pod}", style="bold")
    head.append(f"  (as written: {_FORM_NAMES[c.written]}; derived: {_FORM_NAMES[c.rewrite.direction]})\n")
    head.append(f"node: {node}\nkubelet config: {config}")
    table = Table(box=box.SIMPLE_HEAD, show_lines=False)
    table.add_column("", style="bold", no_wrap=True)
    for m in c.runs:
        mark = " *" if m.label == c.written else ""
        table.add_column(f"{_FORM_NAMES[m.label]}{mark}\nscope {m.scope}", overflow="fold")
    for title, key in _ROWS:
        table.add_row(title, *(_cell(m, key) for m in c.runs))
    parts: list[RenderableType] = [head, table, Text("* = as written", style="dim")]

    plan = Text()
    plan.append(f"{_FORM_NAMES[c.rewrite.direction]} form: ", style="bold")
    budget = c.rewrite.budget.get("requests", {})
    if c.rewrite.direction == "podLevel":
        plan.append("spec.resources " + (", ".join(f"{k}={v}" for k, v in budget.items()) or "-"))
    else:
        plan.append("spec.resources removed (was " + (", ".join(f"{k}={v}" for k, v in budget.items()) or "-") + ")")
    for p in c.rewrite.containers:
        plan.append(f"\n  {p.name} ({p.type}): {p.role} - {p.why}")
    parts.append(plan)
    for m in c.runs:
        if m.startup_error is not None:
            parts.append(Text(f"{_FORM_NAMES[m.label]} / scope {m.scope}: kubelet would not start: {m.startup_error}", style="red"))
    if c.notes:
        notes = Text("notes:", style="bold")
        for n in c.notes:
            notes.append(f"\n  - {n}", style="")
        parts.append(notes)
    return Group(*parts)


def _run(
    pod_file: Path, node_file: Path | None, config_file: Path | None
) -> tuple[list[Comparison], list[str], str, str, Machine, KubeletConfig]:
    """Load everything and compare every Pod of the file; other kinds of
    objects are skipped (listed in the second result)."""
    machine, config, node_from, cfg_from = node_and_config(node_file, config_file)
    name = str(pod_file)
    sources = load_pod_sources(read_text(pod_file, what="pod"), name=name)
    out: list[Comparison] = []
    skipped: list[str] = []
    for src in sources:
        prefix = ""
        if len(sources) > 1 or src.item is not None:
            prefix = f"documents[{src.document}]" + ("" if src.item is None else f".items[{src.item}]")
        kind = src.data.get("kind") if isinstance(src.data, Mapping) else None
        if kind is not None and kind != "Pod":
            skipped.append(f"{src.where}: not a Pod (kind {kind}), skipped")
            continue
        try:
            out.append(compare_pod(src.data, machine, config))
        except InputError as e:
            if e.file is not None:
                raise
            raise InputError(e.message, path=e.path, file=name).at(prefix) from None
    if not out:
        raise InputError("no Pod in the file", file=name)
    return out, skipped, node_from, cfg_from, machine, config


@click.command("compare")
@click.argument("pod_file", metavar="POD", type=click.Path(path_type=Path, dir_okay=True))
@node_option
@config_option
@click.option(
    "--output", "-o", type=click.Choice(("table", "json")), default="table", show_default=True,
    help="table for people; json for programs.",
)
def compare_command(
    pod_file: Path, node_file: Path | None, config_file: Path | None, output: str
) -> None:
    """What pod-level resources (KEP-5526) change for POD: the pod as written vs
    its other form (pod-level <-> per-container), under topology scope pod and
    container, each on an empty node."""
    comparisons, skipped, node_from, cfg_from, machine, config = guard(
        lambda: _run(pod_file, node_file, config_file)
    )
    for line in skipped:
        click.echo(line, err=True)
    if output == "json":
        doc = {
            "node": {"from": node_from, "name": machine.name, "cpus": str(machine.topology.cpus()),
                     "numaNodes": list(machine.numa_ids())},
            "kubeletConfig": {
                "from": cfg_from,
                "cpuManagerPolicy": config.cpu_manager_policy,
                "memoryManagerPolicy": config.memory_manager_policy,
                "topologyManagerPolicy": config.topology_manager_policy,
                "topologyManagerScope": config.topology_manager_scope,
            },
            "pods": [comparison_document(c) for c in comparisons],
        }
        click.echo(dump_json(doc), nl=False)
        return
    console = make_console(sys.stdout)
    for i, c in enumerate(comparisons):
        if i:
            console.file.write("\n")
        print_renderable(console, comparison_renderable(c, node=node_from, config=cfg_from))



"""``podnuma advise`` output for people: the rewritten pods as a YAML
stream with the savings as comments, or unified diffs."""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.analysis.advise import Advice, advice_scope
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.fieldkit import inert
from podnuma.machine.topology import Machine
from podnuma.render.serialize import dump_yaml

__all__ = ["advice_header", "render_diff", "render_yaml"]



def _candidate_lines(a: Advice) -> list[str]:
    out: list[str] = []
    scope = advice_scope(a)
    for c in a.candidates:
        if c.verdict == "refused":
            out.append(f"tried: {c.form_words(scope)}: refused: {c.reason}")
        else:
            out.append(f"tried: {c.form_words(scope)}: admitted, chosen")
    return out


def _as_written_line(a: Advice) -> list[str]:
    """How the pod as written fares on the node given (a skipped pod)."""
    b = a.before
    if b is None:
        return []
    if not b.admitted:
        return [f"as written: rejected on this node: {b.reason}: {b.message}"]
    return [f"as written: admitted on this node, {b.exclusive_cpus.size()} exclusive CPUs, "
            f"{b.held_cpus.size()} CPUs taken from the node, density {b.density} copies ({_stop(b)})"]


def _summary_lines(a: Advice, beyond: Sequence[str] = ()) -> list[str]:
    if a.status == "skipped":
        lines = [f"skipped: {a.reason}"]
        if a.sidecar_rules:
            lines.append("sidecars: " + ", ".join(f"{n} ({r})" for n, r in a.sidecar_rules.items()))
        return lines
    assert a.before is not None and a.after is not None and a.rewrite is not None
    b, af = a.before, a.after
    container_scope = af.scope == "container"
    moved = [p.name for p in a.rewrite.containers if p.role == "shared"]
    kept = [p.name for p in a.rewrite.containers if p.role == "exclusive"]
    budget = ", ".join(f"{k}={v}" for k, v in a.rewrite.budget.get("requests", {}).items())
    where = "node shared pool (scope container)" if container_scope else "pod shared pool"
    lines = [
        f"rewritten ({a.strategy}): spec.resources {budget}; exclusive: {', '.join(kept) or '-'}; "
        f"{where}: {', '.join(moved) or '-'}",
    ]
    if a.sidecar_rules:
        lines.append("sidecars: " + ", ".join(f"{n} ({r})" for n, r in a.sidecar_rules.items()))
    lines.extend(_candidate_lines(a))
    pool = af.pod_shared_cpus.size()
    if container_scope:
        on_node = ", ".join(af.node_shared_containers) or "-"
        pool_words = f"no pod shared pool: on the node shared pool: {on_node}"
    else:
        pool_words = f"pod shared pool {pool} CPU(s)"
    if b.admitted:
        eb, ea = b.exclusive_cpus.size(), af.exclusive_cpus.size()
        hb, ha = b.held_cpus.size(), af.held_cpus.size()
        lines.append(
            f"exclusive CPUs {eb} -> {ea}; sidecar-only CPUs {b.sidecar_only_cpus.size()} -> "
            f"{af.sidecar_only_cpus.size()}; {pool_words}"
        )
        held = "" if container_scope else f", the pod's shared pool holds {pool}"
        if ha == hb:
            if container_scope:
                taken = f"CPUs taken from the node unchanged ({hb})"
            elif pool == eb - ea:
                taken = f"CPUs taken from the node unchanged ({hb}): the {eb - ea} go to the pod's shared pool"
            else:
                taken = f"CPUs taken from the node unchanged ({hb}): the pod's shared pool holds {pool}"
        elif ha < hb:
            taken = f"CPUs taken from the node {hb} -> {ha}: {hb - ha} returned to the node{held}"
        else:
            taken = f"CPUs taken from the node {hb} -> {ha}: {ha - hb} more{held}"
        lines.append(taken)
        if af.density == b.density:
            lines.append(f"density unchanged: {b.density} copies ({_stop(af)})")
        else:
            lines.append(f"density {b.density} -> {af.density} copies (before: {_stop(b)}; after: {_stop(af)})")
    else:
        lines.append(
            f"as written: rejected ({b.reason}); rewrite: admitted, {af.exclusive_cpus.size()} exclusive CPUs, "
            f"{pool_words}, {af.held_cpus.size()} CPUs taken from the node, "
            f"density 0 -> {af.density} copies ({_stop(af)})"
        )
    lines.extend(f"changes: {x}" for x in beyond)
    lines.extend(f"note: {n}" for n in a.notes)
    return lines


def _stop(m: Any) -> str:
    if m.density_capped:
        return "the count stopped at its cap"
    return f"the next copy is rejected: {m.density_stop}"


def _comment(lines: Sequence[str]) -> str:
    out: list[str] = []
    for line in lines:
        for part in line.splitlines() or [""]:
            out.append(f"# {inert(part)}".rstrip())
    return "\n".join(out) + "\n"


def advice_header(node_from: str, cfg_from: str, machine: Machine, config: KubeletConfig) -> list[str]:
    return [
        "podnuma advise: pod-level resources (KEP-5526) rewrites, measured on an empty node",
        f"node: {node_from}: {machine.topology.num_cpus} CPUs, NUMA nodes "
        f"{','.join(str(n) for n in machine.numa_ids())}",
        f"kubelet config: {cfg_from}: cpu {config.cpu_manager_policy}, memory "
        f"{config.memory_manager_policy}, topology {config.topology_manager_policy} "
        f"(scope {config.topology_manager_scope})",
    ]


def _beyond(beyond: Sequence[Sequence[str]] | None, i: int) -> Sequence[str]:
    return beyond[i] if beyond is not None and i < len(beyond) else ()


def _shape_lines(a: Advice) -> list[str]:
    """The nearest other node shape that admits a pod-level form, and
    whether the pod as written is admitted there too (then the bigger node
    alone is enough)."""
    s = a.shape
    if s is None:
        return []
    m, w = s.measured, s.as_written
    pool = (f"budget cpu={s.budget_cpus}" if m.scope == "container"
            else f"shared pool {s.pool_cpus} CPU(s), budget cpu={s.budget_cpus}")
    form = (f"pod-level form ({pool}) admitted: {m.exclusive_cpus.size()} exclusive CPUs, "
            f"{m.held_cpus.size()} CPUs taken from the node, {m.density} copies per node")
    rejected_here = a.before is not None and not a.before.admitted
    shape = f"on another node shape: {s.change} (same kubelet configuration)"
    if w is not None and w.admitted:
        more = m.density - w.density
        gain = ("no more copies than as written" if more == 0 else
                f"{more} more copies than as written" if more > 0 else f"{-more} fewer copies than as written")
        enough = ("the bigger node alone is enough: the pod as written is admitted there too"
                  if rejected_here else "the pod as written is admitted there, as on this node")
        head = (f"{shape}: {enough} ({w.exclusive_cpus.size()} exclusive CPUs, {w.held_cpus.size()} CPUs "
                f"taken from the node, {w.density} copies per node); its {form} ({gain})")
    elif w is not None:
        head = (f"{shape}: the {form}; the pod as written is rejected there"
                f"{' too' if rejected_here else ''} ({w.reason})")
    else:
        head = f"{shape}: the {form}"
    out = [head + " (-o json: otherNodeShape; --as-scenario FILE writes its replay beside FILE)"]
    out += [f"  shape tried: {c}: refused: {r}" for c, r in s.tried]
    return out


def _skipped(a: Advice, title: str) -> str:
    first, *rest = _summary_lines(a)
    return _comment([f"{title}: {first}", *rest, *_as_written_line(a), *_candidate_lines(a),
                     *_shape_lines(a)])


def render_yaml(
    advices: Sequence[Advice], header: Sequence[str], beyond: Sequence[Sequence[str]] | None = None
) -> str:
    """Comments with the savings and skip reasons, and each rewrite as a YAML
    document: the whole output is a valid multi-document YAML stream.
    ``beyond``: per advice, what the rewrite changes beyond CPUs."""
    parts = [_comment(header)]
    for i, a in enumerate(advices):
        title = f"{a.where} {a.pod or ''}".rstrip()
        if a.status == "rewritten":
            assert a.rewrite is not None
            parts.append("---\n" + _comment([title, *_summary_lines(a, _beyond(beyond, i))])
                         + dump_yaml(a.rewrite.manifest))
        else:
            parts.append(_skipped(a, title))
    return "".join(parts)


def _clean_original(doc: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(doc))
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink"):
            meta.pop(key, None)
    return out


def render_diff(
    advices: Sequence[Advice], header: Sequence[str], beyond: Sequence[Sequence[str]] | None = None
) -> str:
    """A unified diff per rewritten pod (original -> rewrite; server-set
    fields left out), each preceded by its savings, and what each moved
    container keeps and loses of its own resources, as comment lines."""
    parts = [_comment([*header, "server-set fields (status, metadata.uid, ...) are left out of the diffs"])]
    for i, a in enumerate(advices):
        title = f"{a.where} {a.pod or ''}".rstrip()
        if a.status != "rewritten":
            parts.append(_skipped(a, title))
            continue
        assert a.rewrite is not None and a.original is not None
        old = dump_yaml(_clean_original(a.original)).splitlines(keepends=True)
        new = dump_yaml(a.rewrite.manifest).splitlines(keepends=True)
        lost = [f"{p.name} loses its own {', '.join(p.lost)}" for p in a.rewrite.containers if p.lost]
        parts.append(_comment([title, *_summary_lines(a, _beyond(beyond, i)),
                               *(f"lost: {x}" for x in lost)]))
        parts.append("".join(difflib.unified_diff(old, new, f"a/{a.where}", f"b/{a.where}")))
    return "".join(parts)



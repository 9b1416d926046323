"""``podnuma advise`` output for people: the rewritten pods as a YAML
stream with the savings as comments, or unified diffs."""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.analysis.advise import Advice
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.machine.topology import Machine
from podnuma.render.serialize import dump_yaml

__all__ = ["advice_header", "render_diff", "render_yaml"]



def _candidate_lines(a: Advice) -> list[str]:
    out: list[str] = []
    for c in a.candidates:
        if c.verdict == "refused":
            out.append(f"tried: shared pool {c.pool_cpus} CPU(s), budget cpu={c.budget_cpus}: refused: {c.reason}")
        else:
            out.append(f"tried: shared pool {c.pool_cpus} CPU(s), budget cpu={c.budget_cpus}: admitted, chosen")
    return out


def _summary_lines(a: Advice, beyond: Sequence[str] = ()) -> list[str]:
    if a.status == "skipped":
        lines = [f"skipped: {a.reason}"]
        if a.sidecar_rules:
            lines.append("sidecars: " + ", ".join(f"{n} ({r})" for n, r in a.sidecar_rules.items()))
        return lines
    assert a.before is not None and a.after is not None and a.rewrite is not None
    b, af = a.before, a.after
    moved = [p.name for p in a.rewrite.containers if p.role == "shared"]
    kept = [p.name for p in a.rewrite.containers if p.role == "exclusive"]
    budget = ", ".join(f"{k}={v}" for k, v in a.rewrite.budget.get("requests", {}).items())
    lines = [
        f"rewritten ({a.strategy}): spec.resources {budget}; exclusive: {', '.join(kept) or '-'}; "
        f"pod shared pool: {', '.join(moved) or '-'}",
    ]
    if a.sidecar_rules:
        lines.append("sidecars: " + ", ".join(f"{n} ({r})" for n, r in a.sidecar_rules.items()))
    lines.extend(_candidate_lines(a))
    pool = af.pod_shared_cpus.size()
    if b.admitted:
        eb, ea = b.exclusive_cpus.size(), af.exclusive_cpus.size()
        hb, ha = b.held_cpus.size(), af.held_cpus.size()
        lines.append(
            f"exclusive CPUs {eb} -> {ea}; sidecar-only CPUs {b.sidecar_only_cpus.size()} -> "
            f"{af.sidecar_only_cpus.size()}; pod shared pool {pool} CPU(s)"
        )
        if ha == hb:
            taken = f"CPUs taken from the node unchanged ({hb}): the {eb - ea} go to the pod's shared pool"
        elif ha < hb:
            taken = (f"CPUs taken from the node {hb} -> {ha}: {hb - ha} returned to the node, "
                     f"the pod's shared pool holds {pool}")
        else:
            taken = f"CPUs taken from the node {hb} -> {ha}: {ha - hb} more"
        lines.append(taken)
        if af.density == b.density:
            lines.append(f"density unchanged: {b.density} copies ({_stop(af)})")
        else:
            lines.append(f"density {b.density} -> {af.density} copies (before: {_stop(b)}; after: {_stop(af)})")
    else:
        lines.append(
            f"as written: rejected ({b.reason}); rewrite: admitted, {af.exclusive_cpus.size()} exclusive CPUs, "
            f"pod shared pool {pool} CPU(s), {af.held_cpus.size()} CPUs taken from the node, "
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
            out.append(f"# {part}".rstrip())
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
    """The nearest other node shape that admits a pod-level form."""
    s = a.shape
    if s is None:
        return []
    out = [f"on another node shape: {s.change} (same kubelet configuration): shared pool "
           f"{s.pool_cpus} CPU(s), budget cpu={s.budget_cpus}: admitted, "
           f"{s.measured.exclusive_cpus.size()} exclusive CPUs, {s.measured.density} copies per node "
           "(-o json: otherNodeShape, its node and pod replay in podnuma simulate)"]
    out += [f"  shape tried: {c}: refused: {r}" for c, r in s.tried]
    return out


def _skipped(a: Advice, title: str) -> str:
    first, *rest = _summary_lines(a)
    return _comment([f"{title}: {first}", *rest, *_candidate_lines(a), *_shape_lines(a)])


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



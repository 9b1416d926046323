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



def _summary_lines(a: Advice) -> list[str]:
    if a.status == "skipped":
        return [f"skipped: {a.reason}"]
    assert a.before is not None and a.after is not None and a.rewrite is not None
    b, af = a.before, a.after
    moved = [p.name for p in a.rewrite.containers if p.role == "shared"]
    kept = [p.name for p in a.rewrite.containers if p.role == "exclusive"]
    budget = ", ".join(f"{k}={v}" for k, v in a.rewrite.budget.get("requests", {}).items())
    lines = [
        f"rewritten: spec.resources {budget}; exclusive: {', '.join(kept) or '-'}; "
        f"pod shared pool: {', '.join(moved) or '-'}",
    ]
    if b.admitted:
        lines.append(
            f"exclusive CPUs {b.exclusive_cpus.size()} -> {af.exclusive_cpus.size()} "
            f"({b.exclusive_cpus.size() - af.exclusive_cpus.size()} freed); "
            f"sidecar-only CPUs {b.sidecar_only_cpus.size()} -> {af.sidecar_only_cpus.size()}; "
            f"pod shared pool {af.pod_shared_cpus.size()} CPUs"
        )
        lines.append(
            f"CPUs taken from the node {b.held_cpus.size()} -> {af.held_cpus.size()}; "
            f"density {b.density} -> {af.density} copies"
        )
    else:
        lines.append(
            f"as written: rejected ({b.reason}); rewrite: {af.exclusive_cpus.size()} exclusive CPUs, "
            f"pod shared pool {af.pod_shared_cpus.size()} CPUs, density {af.density} copies"
        )
    lines.extend(f"note: {n}" for n in a.notes)
    return lines


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


def render_yaml(advices: Sequence[Advice], header: Sequence[str]) -> str:
    """Comments with the savings and skip reasons, and each rewrite as a YAML
    document: the whole output is a valid multi-document YAML stream."""
    parts = [_comment(header)]
    for a in advices:
        title = f"{a.where} {a.pod or ''}".rstrip()
        if a.status == "rewritten":
            assert a.rewrite is not None
            parts.append("---\n" + _comment([title, *_summary_lines(a)]) + dump_yaml(a.rewrite.manifest))
        else:
            parts.append(_comment([f"{title}: {_summary_lines(a)[0]}"]))
    return "".join(parts)


def _clean_original(doc: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(doc))
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink"):
            meta.pop(key, None)
    return out


def render_diff(advices: Sequence[Advice], header: Sequence[str]) -> str:
    """A unified diff per rewritten pod (original -> rewrite; server-set
    fields left out), each preceded by its savings as comment lines."""
    parts = [_comment([*header, "server-set fields (status, metadata.uid, ...) are left out of the diffs"])]
    for a in advices:
        title = f"{a.where} {a.pod or ''}".rstrip()
        if a.status != "rewritten":
            parts.append(_comment([f"{title}: {_summary_lines(a)[0]}"]))
            continue
        assert a.rewrite is not None and a.original is not None
        old = dump_yaml(_clean_original(a.original)).splitlines(keepends=True)
        new = dump_yaml(a.rewrite.manifest).splitlines(keepends=True)
        parts.append(_comment([title, *_summary_lines(a)]))
        parts.append("".join(difflib.unified_diff(old, new, f"a/{a.where}", f"b/{a.where}")))
    return "".join(parts)



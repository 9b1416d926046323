"""``podnuma advise``: propose the pod-level rewrite (KEP-5526) of existing pods.

For every Pod in the input files (multi-document YAML, JSON, ``kubectl get
pods -o json|yaml`` lists), propose its pod-level form (rules in
``podnuma.whatif.rewrite``: the budget in ``spec.resources``, exclusive
slices kept for the containers that need them, sidecars and small
containers moved to the pod shared pool), run the pod as written and the
rewrite through the engine on an empty node (the given node and kubelet
configuration, or the built-in 2-socket node with static CPU / Static
memory / restricted / scope pod), and print the rewrite as Pod YAML (or a
unified diff) with the measured savings: exclusive CPUs freed, CPUs only
sidecars used, density before and after.

A pod is skipped, with its reason, when it is not a Pod, is invalid, is
already pod-level, is not Guaranteed, has no exclusive CPUs to gain, or when
the rewrite would be rejected or would take exclusive CPUs from a container
that keeps its slice (verified by simulation: such a rewrite is never
printed).

:func:`advise_pod` is pure; :data:`advise_command` is the click command.
"""

from __future__ import annotations

import copy
import difflib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import click

from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import parse_pod
from podnuma.api.qos import compute_pod_qos
from podnuma.errors import InputError, KubeletStartupError
from podnuma.machine.topology import Machine
from podnuma.scenario.document import dump_json, dump_yaml
from podnuma.scenario.load import describe_type
from podnuma.whatif._cli import EXIT_INPUT, config_option, guard, node_and_config, node_option
from podnuma.whatif.inputs import PodSource, load_pod_sources, read_text
from podnuma.whatif.measure import Measurement, measure, measure_manifest, variant_config
from podnuma.whatif.rewrite import (
    Rewrite,
    has_pod_level_resources,
    has_whole_cpus,
    sidecar_names,
    to_pod_level,
)

__all__ = ["Advice", "advise_pod", "advice_document", "advise_command"]

Status = Literal["rewritten", "skipped"]


@dataclass(frozen=True)
class Advice:
    """The outcome for one object of the input."""

    where: str  # FILE#DOC[.items[i]]
    pod: str | None  # namespace/name when known
    status: Status
    reason: str | None = None  # why skipped
    original: Mapping[str, Any] | None = None
    rewrite: Rewrite | None = None
    before: Measurement | None = None
    after: Measurement | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    error: InputError | None = None  # the pod is invalid: why (paths relative to the pod)

    def savings(self) -> dict[str, Any]:
        b, a = self.before, self.after
        if b is None or a is None:
            return {}
        return {
            "exclusiveCpusBefore": b.exclusive_cpus.size() if b.admitted else None,
            "exclusiveCpusAfter": a.exclusive_cpus.size(),
            "exclusiveCpusFreed": (b.exclusive_cpus.size() - a.exclusive_cpus.size()) if b.admitted else None,
            "sidecarOnlyCpusBefore": b.sidecar_only_cpus.size() if b.admitted else None,
            "sidecarOnlyCpusAfter": a.sidecar_only_cpus.size(),
            "podSharedCpusAfter": a.pod_shared_cpus.size(),
            "cpusTakenFromNodeBefore": b.held_cpus.size() if b.admitted else None,
            "cpusTakenFromNodeAfter": a.held_cpus.size(),
            "densityBefore": b.density,
            "densityAfter": a.density,
            "admittedBefore": b.admitted,
            "rejectedBefore": None if b.admitted else b.reason,
        }


def _ref(doc: Any) -> str | None:
    if not isinstance(doc, Mapping):
        return None
    meta = doc.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        return None
    ns = meta.get("namespace") if isinstance(meta.get("namespace"), str) else "default"
    return f"{ns}/{meta['name']}"


def advise_pod(
    doc: Any,
    machine: Machine,
    config: KubeletConfig,
    *,
    where: str = "",
    cap: int = 512,
    shared_pool_cpus: int | None = None,
) -> Advice:
    """Propose and verify the pod-level rewrite of one object.

    Never raises for a bad pod (it is skipped with the reason);
    ``KubeletStartupError`` when the configuration itself cannot run.
    """
    ref = _ref(doc)

    def skip(reason: str, **kw: Any) -> Advice:
        return Advice(where=where, pod=ref, status="skipped", reason=reason, original=doc
                      if isinstance(doc, Mapping) else None, **kw)

    if not isinstance(doc, Mapping):
        return skip(
            "not a Pod manifest (not a mapping)",
            error=InputError(f"must be a Kubernetes object (a mapping), found {describe_type(doc)}"),
        )
    kind = doc.get("kind")
    if kind is not None and kind != "Pod":
        return skip(f"not a Pod (kind {kind})")
    if has_pod_level_resources(doc):
        return skip("already pod-level (spec.resources is set)")
    scope = config.topology_manager_scope
    plrm_cfg, _ = variant_config(config, scope=scope, pod_level=True)
    try:
        pod = parse_pod(doc, gates=plrm_cfg.feature_gates)
    except InputError as e:
        return skip(f"invalid pod: {e}", error=e)
    ref = pod.ref
    qos = compute_pod_qos(pod, pod_level_resources=True)
    if qos != "Guaranteed":
        return skip(f"not Guaranteed (QoS {qos}): the kubelet gives it no exclusive CPUs, nothing to gain")

    rewrite = to_pod_level(doc, pod, shared_pool_cpus=shared_pool_cpus)
    by_name = {c.name: c for c in pod.all_containers()}
    moving = [p.name for p in rewrite.containers if p.role == "shared" and has_whole_cpus(by_name[p.name])]
    if not moving:
        return skip(
            "no exclusive CPUs to gain: no sidecar or small container holds whole CPUs",
            rewrite=rewrite,
        )
    sidecars = sidecar_names(pod)
    before = measure(machine, config, pod, label="perContainer", sidecars=sidecars, cap=cap)
    if before.startup_error is not None:
        raise KubeletStartupError(before.startup_error)
    try:
        after = measure_manifest(
            machine, config, rewrite.manifest, label="podLevel", scope=scope,
            pod_level=True, sidecars=sidecars, cap=cap,
        )
    except InputError as e:  # a bug in the rewrite: never print it
        return skip(f"the rewrite is not a valid pod ({e})", rewrite=rewrite)
    if after.startup_error is not None:
        raise KubeletStartupError(after.startup_error)
    notes = list(rewrite.notes)
    if after.gates_forced:
        notes.append(
            "measured with feature gate(s) " + ", ".join(f"{g}=true" for g in after.gates_forced)
            + " forced on: the node needs them for the rewrite to take effect"
        )
    if not after.admitted:
        return skip(
            f"the rewrite would be rejected: {after.reason}: {after.message}",
            rewrite=rewrite, before=before, after=after, notes=tuple(notes),
        )
    if before.admitted:
        freed = before.exclusive_cpus.size() - after.exclusive_cpus.size()
        if freed <= 0:
            return skip(
                f"no exclusive CPUs to gain (measured: {before.exclusive_cpus.size()} exclusive "
                f"before, {after.exclusive_cpus.size()} after)",
                rewrite=rewrite, before=before, after=after, notes=tuple(notes),
            )
    # Every container that keeps its slice must keep its exclusive CPUs (as
    # many as it had as written, or as it asks for when the pod as written
    # is rejected).
    had = before.exclusive_by_container() if before.admitted else None
    kept = after.exclusive_by_container()
    for p in rewrite.containers:
        c = by_name[p.name]
        if p.role != "exclusive" or not has_whole_cpus(c) or c.kind == "init":
            continue
        if had is not None:
            if p.name not in had:
                continue
            want = had[p.name].size()
        else:
            want = c.requests["cpu"].milli_value() // 1000
        got = kept.get(p.name)
        if got is None or got.size() < want:
            return skip(
                f"the rewrite would take exclusive CPUs from {p.name} "
                f"({want} wanted, {0 if got is None else got.size()} exclusive after)",
                rewrite=rewrite, before=before, after=after, notes=tuple(notes),
            )
    if before.admitted:
        if after.density < before.density:
            notes.append(
                f"fewer copies fit after the rewrite ({before.density} -> {after.density}): "
                "the pod budget must fit as one block"
            )
    else:
        notes.append(f"the pod as written is rejected on this node: {before.reason}: {before.message}")
    if scope == "container":
        notes.append(
            "topology scope container: the moved containers run on the node shared pool, "
            "not on a pod shared pool (use scope pod for the pod bubble)"
        )
    return Advice(
        where=where, pod=ref, status="rewritten", original=doc, rewrite=rewrite,
        before=before, after=after, notes=tuple(notes),
    )


# --------------------------------------------------------------------------
# output


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


def _header(node_from: str, cfg_from: str, machine: Machine, config: KubeletConfig) -> list[str]:
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


def advice_document(a: Advice) -> dict[str, Any]:
    return {
        "source": a.where,
        "pod": a.pod,
        "status": a.status,
        "reason": a.reason,
        "rewrite": a.rewrite.manifest if a.rewrite is not None and a.status == "rewritten" else None,
        "containers": [
            {"name": p.name, "type": p.type, "role": p.role, "why": p.why}
            for p in (a.rewrite.containers if a.rewrite is not None else ())
        ],
        "savings": a.savings() if a.status == "rewritten" else None,
        "before": a.before.as_dict() if a.before is not None else None,
        "after": a.after.as_dict() if a.after is not None else None,
        "notes": list(a.notes),
    }


def _advise_source(
    src: PodSource, machine: Machine, config: KubeletConfig, shared_pool_cpus: int | None
) -> Advice:
    return advise_pod(src.data, machine, config, where=src.where, shared_pool_cpus=shared_pool_cpus)


@click.command("advise")
@click.argument("files", metavar="FILE...", nargs=-1, required=True,
                type=click.Path(path_type=Path, dir_okay=True))
@node_option
@config_option
@click.option("--diff", "as_diff", is_flag=True, help="Print unified diffs instead of the rewritten pods.")
@click.option(
    "--shared-pool-cpus", type=click.IntRange(min=1), default=None, metavar="N",
    help="Size the pod shared pool: budget = exclusive slices + N CPUs "
    "(default: keep the pod's CPU request as the budget).",
)
@click.option(
    "--output", "-o", type=click.Choice(("yaml", "json")), default="yaml", show_default=True,
    help="yaml: the rewritten pods (savings as comments); json: a report for programs.",
)
def advise_command(
    files: tuple[Path, ...], node_file: Path | None, config_file: Path | None,
    as_diff: bool, shared_pool_cpus: int | None, output: str,
) -> None:
    """Propose the pod-level rewrite (KEP-5526) of each Pod in FILE... (YAML
    documents, JSON, kubectl get pods lists) and measure what it saves."""
    machine, config, node_from, cfg_from = guard(lambda: node_and_config(node_file, config_file))
    advices: list[Advice] = []
    errors: list[str] = []
    for path in files:
        try:
            sources: list[PodSource] = load_pod_sources(read_text(path, what="pod"), name=str(path))
        except InputError as e:
            errors.append(str(e))
            continue
        if not sources:
            errors.append(str(InputError("no Pod in the file", file=str(path))))
        for src in sources:
            advice = guard(partial(_advise_source, src, machine, config, shared_pool_cpus))
            if advice.error is not None:
                # an invalid Pod is invalid input: named by file and field path
                prefix = ""
                if len(sources) > 1 or src.item is not None:
                    prefix = f"documents[{src.document}]" + (
                        "" if src.item is None else f".items[{src.item}]"
                    )
                bad = advice.error
                errors.append(str(InputError(bad.message, path=bad.path, file=src.file).at(prefix)))
                continue
            advices.append(advice)
    header = _header(node_from, cfg_from, machine, config)
    if output == "json":
        doc = {
            "node": {"from": node_from, "name": machine.name, "cpus": str(machine.topology.cpus())},
            "kubeletConfig": {
                "from": cfg_from,
                "cpuManagerPolicy": config.cpu_manager_policy,
                "memoryManagerPolicy": config.memory_manager_policy,
                "topologyManagerPolicy": config.topology_manager_policy,
                "topologyManagerScope": config.topology_manager_scope,
            },
            "pods": [advice_document(a) for a in advices],
            "errors": errors,
        }
        click.echo(dump_json(doc), nl=False)
    elif as_diff:
        click.echo(render_diff(advices, header), nl=False)
    else:
        click.echo(render_yaml(advices, header), nl=False)
    for message in errors:
        click.echo(f"error: {message}", err=True)
    if errors:
        sys.exit(EXIT_INPUT)

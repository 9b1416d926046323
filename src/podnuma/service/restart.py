"""``podnuma restart``: what a kubelet restart does to the pods running on a
node -- after a scenario's steps, or from a kubelet state directory -- and
the scenario that replays it (:mod:`podnuma.analysis.restart`)."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podnuma.analysis.restart import (
    MOVED,
    REJECTED,
    UPSTREAM_ISSUE,
    NodeState,
    PodOutcome,
    RestartReport,
    RunningPod,
    creation_time,
    outcome_document,
    restart,
    restart_after_document,
    state_after_run,
)
from podnuma.analysis.state import NONE_ASSUMED, POD_SET_POLICIES, or_words, scenario_document
from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.discover import load_node
from podnuma.inputs.documents import parse_document
from podnuma.inputs.overrides import Override, apply_overrides
from podnuma.inputs.pods import DEFAULT_NODE_YAML, config_document, node_document
from podnuma.inputs.state import (
    PodRef,
    check_dump_pods,
    checkpoint_pod_uids,
    read_kubelet_config,
    read_pods_dump,
    read_state_dir,
)
from podnuma.inputs.text import TextInput
from podnuma.scenario.run import run_scenario
from podnuma.service.machine import discover
from podnuma.service.scenario import load
from podnuma.service.state import config_gates, one_machine, starts

__all__ = [
    "PodRisk",
    "pod_restart_risks",
    "restart_after_scenario",
    "restart_state_dir",
    "risk_lines",
]

Note = Callable[[str], None]

def restart_after_scenario(
    src: TextInput, *, note: Note | None = None, overrides: Sequence[Override] = ()
) -> RestartReport:
    """Run the scenario ``src``, then restart its kubelet: every pod still
    running at the end is re-admitted in the kubelet's order. ``overrides``
    (``--set``) change the scenario's kubelet configuration, as ``simulate
    --set`` does: the node runs the steps and restarts with it (the restart
    scenario carries it inline)."""
    scenario = load(src, note=note, overrides=tuple(overrides))
    run = run_scenario(scenario)
    state = state_after_run(scenario, run, base_dir=src.base_dir or Path.cwd())
    return _with_overrides(restart(state), overrides)


def _with_overrides(report: RestartReport, overrides: Sequence[Override]) -> RestartReport:
    return dataclasses.replace(report, overrides=tuple(str(o) for o in overrides)) if overrides else report


def _dump_pods(path: str, uids: set[str]) -> dict[str, PodRef]:
    """The pods of the dump at ``path`` that own checkpoint entries (UID ->
    pod), their creation times checked (errors name the dump's file and the
    pod's field path there)."""
    out: dict[str, PodRef] = {}
    for uid, ref in read_pods_dump(path).items():
        if uid not in uids or ref.manifest is None:
            continue
        try:
            creation_time(RunningPod(uid, uid, ref.manifest))
        except InputError as e:
            raise ref.blame(e) from None
        out[uid] = ref
    return out


def _phase(manifest: Mapping[str, Any]) -> str | None:
    status = manifest.get("status")
    phase = status.get("phase") if isinstance(status, Mapping) else None
    return phase if isinstance(phase, str) else None


def _reserves_cpus(config: Mapping[str, Any]) -> bool:
    """Whether a configuration reserves CPUs the static policy can take
    (reservedSystemCPUs, or a kube/system-reserved CPU amount)."""
    if config.get("reservedSystemCPUs"):
        return True
    return any(isinstance(config.get(k), Mapping) and config[k].get("cpu") for k in ("kubeReserved", "systemReserved"))


def restart_state_dir(
    directory: Path, *, pods: str | None = None, node: TextInput | None = None,
    sysfs: Path | None = None, kubelet_config: str | None = None, overrides: Sequence[Override] = (),
) -> RestartReport:
    """Restart the kubelet whose state directory is ``directory``: its
    checkpoints, the specs of the pods owning entries from ``pods`` (a
    ``kubectl get pods -o json`` dump; a pod missing there is kept on the
    node as its entries but cannot be re-admitted), on the machine of
    ``node`` (a scenario node mapping) or ``sysfs`` (default ``/sys``), with
    the configuration of ``kubelet_config`` (else inferred from the
    checkpoints, with notes), ``overrides`` (``--set``) applied on top.
    A start-up failure on the checkpoints names their files in
    ``directory``, as ``state inspect`` does."""
    one_machine(node, sysfs)
    files = read_state_dir(directory)
    source = read_kubelet_config(kubelet_config) if kubelet_config is not None else None
    config = dict(source.mapping) if source is not None else None
    if node is not None:
        node_doc: dict[str, Any] = node_document(node)  # (checked: its errors name --node's file)
    else:
        got = discover(sysfs if sysfs is not None else Path("/sys"))["node"]
        assert isinstance(got, dict)
        node_doc = got
    if source is not None or overrides:
        # the configuration given starts on this machine, or its error names
        # its file or --set (what is left to the restart is the state's)
        given = apply_overrides(config, tuple(overrides)) if overrides else config
        if given is not None:
            starts(given, load_node(node_doc, base_dir=Path.cwd()), source, tuple(overrides))
    doc, notes = scenario_document(files, node=node_doc, kubelet_config=config)
    uids = checkpoint_pod_uids(files.cpu, files.memory)
    specs = _dump_pods(pods, uids) if pods is not None else {}
    running = [RunningPod(uid, str(ref), dict(ref.manifest or {}), _phase(ref.manifest or {}))
               for uid, ref in specs.items()]
    missing = sorted(uids - set(specs))
    running += [RunningPod(uid, uid, None) for uid in missing]
    if missing:
        notes.append(
            f"{len(missing)} pod(s) own checkpoint entries but have no spec"
            + (" in the pods dump" if pods is not None else " (give --pods)")
            + ": they keep their entries in the replay and are not re-admitted"
        )
    state, node_out, config_out = doc["state"], doc["node"], doc["kubeletConfig"]
    assert isinstance(state, dict) and isinstance(node_out, dict) and isinstance(config_out, dict)
    if overrides:
        config_out = apply_overrides(config_out, overrides)
    if _reserves_cpus(config_out):  # (given by --set: the note asking for it is answered)
        notes = [n for n in notes if "does not record reservedSystemCPUs" not in n]
    if "topologyManagerPolicy" in config_out:  # (given by --set: nothing is assumed)
        notes = [n for n in notes if NONE_ASSUMED not in n]
    gates = config_gates(config_out)
    if gates is not None:  # (a pod the restart's scenario refuses: named where it is in the dump)
        check_dump_pods(specs.values(), gates)
    if source is None and config_out.get("cpuManagerPolicy") == "static" and not _reserves_cpus(config_out):
        raise InputError(
            "--kubelet-config: the node's configuration is needed: its CPU manager checkpoint is the "
            "static policy's, which does not record the reserved CPUs the kubelet started with (give "
            "--kubelet-config FILE, or --set reservedSystemCPUs=LIST on the configuration inferred "
            "from the checkpoints)")
    # (the kubelet's refusal of a checkpoint names it in ``directory``)
    node_state = NodeState(
        node=node_out, kubelet_config=config_out,
        cpu_checkpoint=state.get("cpuManager"), memory_checkpoint=state.get("memoryManager"),
        pods=tuple(running), source=str(directory), base_dir=Path.cwd(), notes=tuple(notes),
        device_checkpoint=state.get("deviceManager"), state_dir=str(directory),
    )
    if source is None and "topologyManagerPolicy" not in config_out and _holds_pod_sets(files):
        return _with_overrides(_restart_under_pod_set_policies(node_state), overrides)
    return _with_overrides(restart(node_state), overrides)


def _holds_pod_sets(files: Any) -> bool:
    cpu, memory = files.cpu, files.memory
    return (cpu is not None and bool(cpu.pod_entries)) or (memory is not None and bool(memory.pod_entries))


def _restart_under_pod_set_policies(state: NodeState) -> RestartReport:
    """The restart of ``state``, whose configuration was inferred from
    checkpoints holding pod sets and names no topology manager policy:
    never under ``none`` (which writes no pod set), but under each policy
    that writes them (:data:`POD_SET_POLICIES`; one the kubelet refuses to
    start with on this machine could not have written them). When every
    one gives the same restart, its report (the scenario under the first),
    with a note saying so; else ``InputError`` asking for the node's
    configuration, naming what differs."""
    notes = tuple(n for n in state.notes if NONE_ASSUMED not in n)
    reports: dict[str, RestartReport] = {}
    failure: Exception | None = None
    for policy in POD_SET_POLICIES:
        config = {**state.kubelet_config, "topologyManagerPolicy": policy}
        try:
            reports[policy] = restart(dataclasses.replace(state, kubelet_config=config, notes=notes))
        except (InputError, KubeletStartupError) as e:
            failure = failure or e
    if not reports:
        assert failure is not None
        raise failure
    tried = list(reports)
    first = reports[tried[0]]
    differs = _differences(reports)
    if differs:
        raise InputError(
            "--kubelet-config: the node's topology manager policy is needed: the checkpoints hold pod-level "
            f"sets (pod budgets), which the kubelet writes under {or_words(tried)} only (never none), and the "
            f"restart differs between them ({differs}): give --kubelet-config FILE, or --set "
            "topologyManagerPolicy=POLICY")
    said = (f"the restart is the same under each (its scenario runs {tried[0]})" if len(tried) > 1 else
            f"the kubelet starts with {tried[0]} only on this machine: the restart runs under it")
    note = ("the checkpoints hold pod-level sets (pod budgets): featureGates PodLevelResources and "
            "PodLevelResourceManagers on and topologyManagerScope pod are inferred from them; the topology "
            f"manager policy is not recorded, but such sets are written under {or_words(list(POD_SET_POLICIES))} "
            f"only (never none), and {said}; give the node's configuration (--kubelet-config) to run its own")
    return dataclasses.replace(first, notes=(*first.notes, note))


def _differences(reports: Mapping[str, RestartReport]) -> str:
    """What differs between the restarts of ``reports`` (by policy), in a
    few words (``""``: nothing): the pods' outcomes and where they go,
    else the CPUs left, else the next start."""
    def pod_key(o: PodOutcome) -> str:
        return json.dumps([o.outcome, None if o.after is None else o.after.document(), o.reason], sort_keys=True)

    def said(o: PodOutcome) -> str:
        after = o.after.document() if o.after is not None and o.outcome == MOVED else None
        where = f" to CPUs {after.get('cpus')}" if isinstance(after, Mapping) and after.get("cpus") else ""
        return f"{o.outcome}{where}"

    policies = list(reports)
    parts: list[str] = []
    by_pod = [{o.uid: o for o in reports[p].pods} for p in policies]
    for o in reports[policies[0]].pods:
        got = [b.get(o.uid) for b in by_pod]
        if any(g is None for g in got) or len({pod_key(g) for g in got if g is not None}) == 1:
            continue
        groups: dict[str, list[str]] = {}
        for policy, g in zip(policies, got, strict=True):
            assert g is not None
            groups.setdefault(said(g), []).append(policy)
        parts.append(f"{o.ref}: " + ", ".join(f"{words} under {or_words(ps, 'and')}" for words, ps in groups.items()))
    if parts:
        shown = "; ".join(parts[:3])
        return shown + (f"; and {len(parts) - 3} more pod(s)" if len(parts) > 3 else "")
    if len({(r.totals, r.next_start) for r in reports.values()}) > 1:
        return "the CPUs it leaves and the next start"
    return ""


# --------------------------------------------------------------------------
# one pod's restart risk (compare, advise, explain)

FORMS = {"perContainer": "per-container", "podLevel": "pod-level"}


@dataclass(frozen=True)
class PodRisk:
    """The pod alone on the node in one form and topology scope, then a
    kubelet restart: its outcome (``report``), or why there is none
    (``error``: the configuration does not start, the pod is not admitted in
    the first place)."""

    pod: str
    form: str  # perContainer | podLevel
    scope: str
    report: RestartReport | None
    error: str | None = None

    @property
    def outcome(self) -> PodOutcome | None:
        if self.report is None or not self.report.pods:
            return None
        return self.report.pods[0]

    def summary(self) -> str:
        o = self.outcome
        if o is None:
            return self.error or "not admitted in the first place"
        if o.outcome == MOVED:
            assert o.after is not None
            text = f"moved {o.before.cpus} -> {o.after.cpus}, CPUs {o.left_behind} taken by nobody"
        elif o.outcome == REJECTED:
            text = f"rejected: {o.reason}: {o.message}"
            if o.left_behind:
                text += f"; CPUs {o.left_behind} taken by nobody"
        else:
            text = f"kept ({o.before.cpus or 'shared pool'})"
        assert self.report is not None
        if self.report.next_start is not None:
            text += "; the next kubelet start fails"
        return text

    def document(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "pod": self.pod,
            "form": self.form,
            "scope": self.scope,
            "outcome": o.outcome if o is not None else "notAdmitted",
            "summary": self.summary(),
            "detail": outcome_document(o) if o is not None else None,
            "nextStart": None if self.report is None else {
                "starts": self.report.next_start is None, "message": self.report.next_start,
            },
            "scenario": self.report.scenario if self.report is not None else None,
        }


def _node_mapping(src: TextInput | None) -> dict[str, Any]:
    if src is None:
        data = parse_document(DEFAULT_NODE_YAML, name="built-in node").data
        assert isinstance(data, dict)
        return dict(data)
    return node_document(src)


def _the_pod(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Pod the kubelet runs for ``manifest``: the Pod itself, or the pod
    a workload creates from its template (as ``compare`` measures it), as
    the API server stores it (its quantities canonical: what the kubelet
    receives)."""
    kind = manifest.get("kind")
    from podnuma.analysis.advise import TEMPLATE_PATHS, workload_pod  # (compare and advise only)
    from podnuma.analysis.rewrite import served_manifest

    if isinstance(kind, str) and kind in TEMPLATE_PATHS:
        _, pod, _ = workload_pod(manifest, kind)
        if pod is not None:
            return served_manifest(pod)
    return served_manifest(manifest)


def pod_restart_risks(
    pods: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]],
    node: TextInput | None,
    config: TextInput | None,
    scopes: Sequence[str],
    *,
    config_doc: Mapping[str, Any] | None = None,
) -> list[PodRisk]:
    """For each ``(pod name, {form: manifest})`` and scope: the pod admitted
    alone on the node (the configuration with that scope; the pod-level
    form with PodLevelResources and PodLevelResourceManagers on), then a
    kubelet restart. A manifest may be a workload (Deployment, CronJob,
    PodTemplate...): the pod it creates from its template is the one
    admitted and restarted. Each result carries the scenario that replays
    it. ``config_doc``: the configuration document to use instead of
    ``config``'s (the effective one under ``--set``)."""
    node_doc = _node_mapping(node)
    base = (node.base_dir if node is not None else None) or Path.cwd()
    config_doc = dict(config_doc if config_doc is not None else config_document(config))
    out: list[PodRisk] = []
    for name, forms in pods:
        for form, written in forms.items():
            manifest = _the_pod(written)
            for scope in scopes:
                cfg = copy.deepcopy(config_doc)
                cfg["topologyManagerScope"] = scope
                if form == "podLevel":
                    gates = dict(cfg.get("featureGates") or {})
                    gates.update({"PodLevelResources": True, "PodLevelResourceManagers": True})
                    cfg["featureGates"] = gates
                doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": node_doc,
                       "kubeletConfig": cfg, "steps": [{"addPod": dict(manifest)}]}
                label = f"{name} ({FORMS.get(form, form)}, scope {scope})"
                try:
                    # (the document read as JSON: its numbers keep their text)
                    report = restart_after_document(doc, name=label, base_dir=base)
                except KubeletStartupError as e:
                    out.append(PodRisk(name, form, scope, None, f"the kubelet would not start: {e}"))
                    continue
                except InputError as e:
                    out.append(PodRisk(name, form, scope, None, f"not a valid pod: {e}"))
                    continue
                error = None if report.pods else "not admitted in the first place"
                out.append(PodRisk(name, form, scope, report, error))
    return out


def risk_lines(risks: Sequence[PodRisk], *, name_pods: bool = False) -> list[str]:
    """The restart section of a report, for people. ``name_pods``: each
    line names its pod (a report of several pods; ``compare`` prints each
    pod's lines under the pod's own table)."""
    if not risks:
        return []
    lines = [f"kubelet restart (v1.37.2, {UPSTREAM_ISSUE}): the pod alone on the node, then re-admitted"]
    for r in risks:
        who = f"{r.pod}: " if name_pods else ""
        lines.append(f"  {who}{FORMS.get(r.form, r.form)} / scope {r.scope}: {r.summary()}")
    return lines


"""``podnuma state inspect``: what a kubelet state directory's checkpoints
say, checked for consistency, or a scenario that replays it."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podnuma.analysis.state import StateReport, inspect_state, scenario_document
from podnuma.api.featuregates import FeatureGateReader
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.discover import load_node
from podnuma.inputs.overrides import Override, apply_overrides, blame
from podnuma.inputs.pods import ConfigSource, node_document
from podnuma.inputs.state import (
    PodRef,
    StateFiles,
    check_dump_pods,
    checkpoint_pod_uids,
    read_kubelet_config,
    read_pods_dump,
    read_state_dir,
)
from podnuma.inputs.text import TextInput
from podnuma.machine.topology import Machine
from podnuma.service.machine import discover

__all__ = ["AsScenario", "as_scenario", "config_gates", "inspect", "one_machine", "starts"]


@dataclass(frozen=True)
class _Read:
    files: StateFiles
    dump: Mapping[str, PodRef] | None
    node: dict[str, Any] | None
    machine: Machine | None


def one_machine(node: object | None, sysfs: Path | None) -> None:
    """The machine is given once: ``--node`` or ``--sysfs``, not both (the
    one wording of ``state inspect`` and ``restart --state-dir``)."""
    if node is not None and sysfs is not None:
        raise InputError("give the machine with --node or --sysfs, not both")


def _read(
    directory: Path, pods: str | None, sysfs: Path | None, node: str | None = None
) -> _Read:
    one_machine(node, sysfs)
    files = read_state_dir(directory)
    dump = read_pods_dump(pods) if pods is not None else None
    if node is not None:
        node_doc = node_document(TextInput.read(node, what="node"))
        return _Read(files, dump, node_doc, load_node(node_doc, base_dir=Path.cwd()))
    if sysfs is None:
        return _Read(files, dump, None, None)
    node_doc = discover(sysfs)["node"]
    assert isinstance(node_doc, dict)
    return _Read(files, dump, node_doc, load_node(node_doc, base_dir=Path.cwd()))


def inspect(
    directory: Path, *, pods: str | None = None, sysfs: Path | None = None, node: str | None = None
) -> StateReport:
    """The checkpoints of ``directory`` per pod and container, with every
    inconsistency; ``pods``: a ``kubectl get pods -o json`` dump (``-``:
    standard input); ``sysfs`` or ``node`` (a node form file, as
    ``--node`` of the other commands): the machine (NUMA nodes of CPUs)."""
    got = _read(directory, pods, sysfs, node)
    return inspect_state(got.files, pods_dump=got.dump, machine=got.machine)


@dataclass(frozen=True)
class AsScenario:
    """``--as-scenario``: the scenario document and the notes on what it
    could not carry over."""

    document: dict[str, Any]
    notes: list[str]


def starts(config: Mapping[str, Any], machine: Machine | None, source: ConfigSource | None,
            overrides: tuple[Override, ...]) -> None:
    """The configuration (of ``source``, ``overrides`` applied) decodes and
    the kubelet starts with it on ``machine`` (when known), or
    ``InputError`` / ``StartupFailure`` naming the field in the file holding
    it, on ``--set`` when an override set it: a scenario it could not start
    with is not written."""
    from podnuma.api.kubeletconfig import load_kubelet_config
    from podnuma.cm.container_manager import Node
    from podnuma.errors import KubeletStartupError
    from podnuma.inputs.startup import startup_failure

    try:
        cfg = load_kubelet_config(config)
    except InputError as e:
        blamed = blame(e, overrides)
        if blamed is not e or e.file or source is None:
            raise blamed from None
        raise source.doc.enrich(e.at(source.prefix)) from None
    if machine is None:
        return
    try:
        Node(machine, cfg)
    except KubeletStartupError as e:
        if source is not None:
            raise source.startup_failure(e, cfg, overrides) from None
        raise startup_failure(e, file="--set", config=cfg, kubelet_config_file="--set",
                              overrides=overrides) from None


def _running_pods(files: StateFiles, dump: Mapping[str, PodRef]) -> tuple[list[dict[str, Any]], list[str]]:
    """The dump's pods that own checkpoint entries, as ``state.pods`` takes
    them (their manifests, UID set, status left out), and a note on the
    entries' pods the dump does not hold."""
    uids = checkpoint_pod_uids(files.cpu, files.memory) | (
        set(files.devices.pods()) if files.devices is not None else set())
    specs: list[dict[str, Any]] = []
    for uid in sorted(uids):
        ref = dump.get(uid)
        if ref is None or ref.manifest is None:
            continue
        manifest = copy.deepcopy(ref.manifest)
        manifest.pop("status", None)
        manifest["metadata"] = {**(manifest.get("metadata") or {}), "uid": uid}
        specs.append(manifest)
    missing = len(uids) - len(specs)
    notes = [f"{missing} pod(s) own checkpoint entries but are not in the pods dump: state.pods "
             "leaves them out (they are known by their entries only)"] if missing else []
    return specs, notes


def _owners(files: StateFiles, dump: Mapping[str, PodRef]) -> list[PodRef]:
    """The dump's pods that own checkpoint entries (:func:`_running_pods`'s)."""
    uids = checkpoint_pod_uids(files.cpu, files.memory) | (
        set(files.devices.pods()) if files.devices is not None else set())
    return [dump[uid] for uid in sorted(uids) if uid in dump and dump[uid].manifest is not None]


def config_gates(config: object) -> FeatureGateReader | None:
    """The feature gates of the configuration ``config`` (None: it does not
    load; the scenario's own reading of it says why)."""
    if not isinstance(config, Mapping):
        return None
    try:
        return load_kubelet_config(config).feature_gates
    except (InputError, KubeletStartupError, ValueError):
        return None


def _replays(doc: Mapping[str, Any], directory: Path) -> None:
    """The scenario ``doc`` starts (no step run): the kubelet restores the
    checkpoints on its machine with its configuration, or the kubelet's
    reason (``StartupFailure``), and a ``state.pods`` it refuses
    (``InputError``), naming the state directory."""
    from podnuma.golang import jsonnumbers as json_numbers
    from podnuma.inputs.scenario import load_scenario_text
    from podnuma.scenario.run import run_scenario

    # (the kubelet's refusal of a checkpoint names it in ``directory``)
    scenario = load_scenario_text(json_numbers.dumps(doc, ensure_ascii=False),
                                  name=f"{directory}: the scenario of its checkpoints", base_dir=Path.cwd(),
                                  state_dir=str(directory), json_only=True)
    run_scenario(scenario, checkpoints=False)


def _holds_pod_sets(files: StateFiles) -> bool:
    cpu, memory = files.cpu, files.memory
    return (cpu is not None and bool(cpu.pod_entries)) or (memory is not None and bool(memory.pod_entries))


def _numa_spread(files: StateFiles, machine: Machine | None) -> tuple[str | None, str | None]:
    """Pods whose own sets rule a policy out, by UID: one whose set (its
    pod-level CPUs, their NUMA nodes known from ``machine``; its pod-level
    memory blocks) spans more than one NUMA node, which
    ``single-numa-node`` never writes; and, with the machine known and no
    other manager narrowing the pod's hint (no static memory manager, no
    device), one whose CPU set spans more NUMA nodes than the fewest that
    hold as many CPUs, which ``restricted`` never writes (it admits a pod
    on its preferred hints only, and the CPU manager prefers the fewest
    NUMA nodes that hold the request: v1.37.2 ``generateCPUTopologyHints``,
    the pod's set allocated within its hint)."""
    from podnuma.cm.memorymanager.policy_static import POLICY_STATIC

    report = inspect_state(files, pods_dump=None, machine=machine)
    sizes: list[int] = []
    if machine is not None:
        details = machine.topology.details
        sizes = sorted((len(details.cpus_in_numa_nodes(n)) for n in machine.numa_ids()), reverse=True)
    memory_static = files.memory is not None and files.memory.policy_name == POLICY_STATIC
    spread = narrow = None
    for pod in report.pods:
        numa: set[int] = set()
        if pod.cpus is not None and machine is not None:
            numa.update(machine.topology.cpu_numa_node_id(c) for c in pod.cpus)
        cpu_span = len(numa)
        for block in pod.memory:
            numa.update(block.numa_affinity)
        if len(numa) > 1 and spread is None:
            spread = pod.uid
        devices = any(c.devices for c in pod.containers)
        if pod.cpus is not None and sizes and not memory_static and not devices and narrow is None:
            need, fewest = len(pod.cpus), 0
            while fewest < len(sizes) and sum(sizes[:fewest]) < need:
                fewest += 1
            if cpu_span > fewest:
                narrow = pod.uid
    return spread, narrow


def _replay_text(doc: Mapping[str, Any], directory: Path) -> str:
    """What ``podnuma simulate -o json`` of the scenario ``doc`` writes (the
    kubelet's start from the checkpoints, the steps, the checkpoints after),
    or its failure (``InputError``, ``StartupFailure``)."""
    import io

    from podnuma.golang import jsonnumbers as json_numbers
    from podnuma.inputs.scenario import load_scenario_text
    from podnuma.render.serialize import write_run_document
    from podnuma.scenario.run import run_scenario

    scenario = load_scenario_text(json_numbers.dumps(doc, ensure_ascii=False),
                                  name=f"{directory}: the scenario of its checkpoints", base_dir=Path.cwd(),
                                  state_dir=str(directory), json_only=True)
    out = io.StringIO()
    write_run_document(run_scenario(scenario), out, "json")
    return out.getvalue()


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The field path of the first place the run documents ``a`` and ``b``
    differ (``None``: they do not)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in [*a, *(k for k in b if k not in a)]:
            if k not in a or k not in b:
                return f"{path}.{k}" if path else str(k)
            got = _first_difference(a[k], b[k], f"{path}.{k}" if path else str(k))
            if got is not None:
                return got
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            got = _first_difference(x, y, f"{path}[{i}]")
            if got is not None:
                return got
        return None if len(a) == len(b) else f"{path}[{min(len(a), len(b))}]"
    return None if a == b else path


def _with_pod_set_policy(doc: dict[str, Any], notes: list[str], got: _Read, directory: Path) -> list[str]:
    """``doc`` (inferred from checkpoints holding pod sets, naming no
    topology manager policy) given the policy that wrote them, and the notes
    saying so (the one assuming ``none`` left out), as ``restart
    --state-dir`` reasons (:func:`podnuma.service.restart.restart_state_dir`):
    never ``none`` (it writes no pod set); not ``single-numa-node`` or
    ``restricted`` when a pod's set spans more NUMA nodes than they keep
    one on (:func:`_numa_spread`); not a policy the
    kubelet does not start with from these checkpoints on the machine
    given. One left: that one; several that replay alike
    (:func:`_replay_text`): the first, said so; several that do not:
    ``InputError`` asking for the node's configuration, naming what each
    gives. Without a machine (``--node``, ``--sysfs``) nothing is replayed:
    the first left, said so."""
    from podnuma.analysis.state import NONE_ASSUMED, POD_SET_POLICIES, or_words
    from podnuma.cm.topologymanager.policy import POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE

    notes = [n for n in notes if NONE_ASSUMED not in n]
    config = doc["kubeletConfig"]
    assert isinstance(config, dict)
    out: list[str] = []  # (why a policy is ruled out)
    left = list(POD_SET_POLICIES)
    spread, narrow = _numa_spread(got.files, got.machine)
    if narrow is not None:
        left.remove(POLICY_RESTRICTED)
        out.append(f"not {POLICY_RESTRICTED}, which keeps a pod's CPUs on the fewest NUMA nodes that hold as "
                   f"many: pod {narrow}'s span more")
    if spread is not None:
        left.remove(POLICY_SINGLE_NUMA_NODE)
        out.append(f"not {POLICY_SINGLE_NUMA_NODE}, which keeps a pod's set on one NUMA node: pod {spread}'s "
                   "spans more")
    head = ("the checkpoints hold pod-level sets (pod budgets): featureGates PodLevelResources and "
            "PodLevelResourceManagers on and topologyManagerScope pod are inferred from them; the topology "
            f"manager policy is not recorded, but such sets are written under {or_words(list(POD_SET_POLICIES))} "
            "only (never none)")
    replays: dict[str, str] = {}
    failed: list[str] = []
    for policy in left if got.machine is not None else ():
        trial = {**doc, "kubeletConfig": {**config, "topologyManagerPolicy": policy}}
        try:
            replays[policy] = _replay_text(trial, directory)
        except (InputError, KubeletStartupError):
            failed.append(policy)
    if not replays:  # (no machine, or none starts: not for the policy's sake)
        why = ("without the node's machine (--node, --sysfs) they are not replayed" if got.machine is None else
               "the configuration inferred does not start on this machine under any (see the other notes): "
               "they are not replayed")
        config["topologyManagerPolicy"] = left[0]
        notes.append(f"warning: {head}{''.join('; ' + o for o in out)}; {why}: {left[0]} is written, give the "
                     "node's configuration (--kubelet-config) to write its own")
        return notes
    out += [f"not {p}, which the kubelet does not start with from them on this machine" for p in failed]
    tried = list(replays)
    groups: dict[str, list[str]] = {}
    for policy, text in replays.items():
        groups.setdefault(text, []).append(policy)
    if len(groups) > 1:
        import json

        texts = list(groups)
        runs = [json.loads(t) for t in texts]
        said = "; ".join(f"{or_words(ps, 'and')}: run {k + 1}" for k, ps in enumerate(groups.values()))
        at = ", ".join(sorted({_first_difference(runs[0], other) or "(the run)" for other in runs[1:]}))
        raise InputError(
            "--kubelet-config: the node's topology manager policy is needed: the checkpoints hold pod-level "
            f"sets (pod budgets), which the kubelet writes under {or_words(tried)} here, and their replay differs "
            f"({said}; they differ at {at}): give --kubelet-config FILE, or --set topologyManagerPolicy=POLICY")
    config["topologyManagerPolicy"] = tried[0]
    said = (f"the replay is the same under {or_words(tried, 'and')} (the scenario runs {tried[0]})" if len(tried) > 1
            else f"only {tried[0]} is left: the scenario runs it")
    notes.append(f"{head}{''.join('; ' + o for o in out)}; {said}; give the node's configuration "
                 "(--kubelet-config) to write its own")
    return notes


def as_scenario(
    directory: Path, *, pods: str | None = None, sysfs: Path | None = None,
    kubelet_config: str | None = None, node: str | None = None, overrides: tuple[Override, ...] = (),
) -> AsScenario:
    """A scenario whose ``state:`` is ``directory``'s checkpoints, on the
    machine of ``node`` (a node form file) or ``sysfs`` (default: this
    machine's ``/sys``) with the configuration of ``kubelet_config``
    (``overrides``, ``--set``, applied to it: to the configuration inferred
    from the checkpoints without one); ``pods`` (a ``kubectl get pods -o
    json`` dump): the specs of the pods owning entries, as ``state.pods``.
    With a configuration and a machine given, the scenario is written only
    if the kubelet starts from it (its configuration, and the checkpoints
    on that machine), else ``InputError`` / ``StartupFailure`` with the
    kubelet's reason."""
    got = _read(directory, pods, sysfs, node)
    source = read_kubelet_config(kubelet_config) if kubelet_config is not None else None
    config = dict(source.mapping) if source is not None else None
    doc, notes = scenario_document(got.files, node=got.node, kubelet_config=config)
    notes = list(notes)
    if overrides:  # (on the configuration given, else on the one inferred from the checkpoints)
        inferred = doc["kubeletConfig"]
        assert isinstance(inferred, dict)
        doc["kubeletConfig"] = apply_overrides(inferred, overrides)
        if any(o.path == "reservedSystemCPUs" for o in overrides):
            notes = [n for n in notes if "does not record reservedSystemCPUs" not in n]
    if got.dump is not None:
        specs, more = _running_pods(got.files, got.dump)
        gates = config_gates(doc["kubeletConfig"])
        if gates is not None:  # (a pod state.pods refuses: named where it is in the dump)
            check_dump_pods(_owners(got.files, got.dump), gates)
        if specs:
            state = doc["state"]
            assert isinstance(state, dict)
            state["pods"] = specs
        notes += more
    config_now = doc["kubeletConfig"]
    assert isinstance(config_now, dict)
    if source is None and "topologyManagerPolicy" not in config_now and _holds_pod_sets(got.files):
        notes = _with_pod_set_policy(doc, notes, got, directory)
    elif "topologyManagerPolicy" in config_now:  # (given by --set: nothing is assumed)
        notes = [n for n in notes if "(none assumed)" not in n]
    if source is not None or overrides:
        config_doc = doc["kubeletConfig"]
        assert isinstance(config_doc, dict)
        starts(config_doc, got.machine, source, overrides)
        if got.machine is not None:  # the node starts from these checkpoints on this machine
            _replays(doc, directory)
    if got.node is None:
        notes.append(
            "node: {sysfs: /sys}: the scenario replays on the machine that reads it; "
            "give --node FILE (or --sysfs DIR) to carry this node's machine"
        )
    return AsScenario(doc, notes)

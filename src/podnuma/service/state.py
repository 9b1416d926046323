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

"""``podnuma restart``: what a kubelet restart does to the pods running on a
node -- after a scenario's steps, or from a kubelet state directory -- and
the scenario that replays it (:mod:`podnuma.analysis.restart`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from podnuma.analysis.restart import NodeState, RestartReport, RunningPod, restart, state_after_run
from podnuma.analysis.state import scenario_document
from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type
from podnuma.inputs.documents import input_name, parse_document, read_text
from podnuma.inputs.state import read_kubelet_config_mapping, read_state_dir
from podnuma.inputs.text import TextInput
from podnuma.scenario.run import run_scenario
from podnuma.service.machine import discover
from podnuma.service.scenario import load

__all__ = ["node_mapping", "restart_after_scenario", "restart_state_dir"]

Note = Callable[[str], None]

_NODE_FILES = ("sysfs", "machineInfoFile")


def restart_after_scenario(src: TextInput, *, note: Note | None = None) -> RestartReport:
    """Run the scenario ``src``, then restart its kubelet: every pod still
    running at the end is re-admitted in the kubelet's order."""
    scenario = load(src, note=note)
    run = run_scenario(scenario)
    state = state_after_run(scenario, run, base_dir=src.base_dir or Path.cwd())
    return restart(state)


def node_mapping(src: TextInput) -> dict[str, Any]:
    """A scenario ``node`` mapping from ``--node`` (the mapping, ``{node:
    ...}`` or a scenario), its file paths made absolute so that the restart
    scenario replays from anywhere."""
    doc = parse_document(src.text, name=src.name)
    data = doc.data
    if not isinstance(data, Mapping):
        raise wrong_type("", "a mapping (the node)", data).in_file(src.name)
    node: Any = data.get("node") if "node" in data else data
    if not isinstance(node, Mapping):
        raise doc.enrich(wrong_type("node", "a mapping", node))
    out = dict(node)
    base = src.base_dir or Path.cwd()
    for key in _NODE_FILES:
        value = out.get(key)
        if isinstance(value, str) and not Path(value).is_absolute():
            out[key] = str((base / value).resolve())
    return out


def _dump_pods(path: str, uids: set[str]) -> tuple[dict[str, tuple[dict[str, Any], str | None]], list[str]]:
    """UID -> (manifest, phase) of the dump's pods that own checkpoint
    entries; notes on the others."""
    name = input_name(path)
    doc = parse_document(read_text(path, what="pods dump"), name=name, json_only=True)
    data = doc.data
    if not isinstance(data, Mapping):
        raise wrong_type("", "a mapping (a kubectl List of pods, or one Pod)", data).in_file(name)
    items = data.get("items") if "items" in data else [data]
    if not isinstance(items, list):
        raise doc.enrich(wrong_type("items", "a list", items))
    out: dict[str, tuple[dict[str, Any], str | None]] = {}
    for i, item in enumerate(items):
        meta = item.get("metadata") if isinstance(item, Mapping) else None
        uid = meta.get("uid") if isinstance(meta, Mapping) else None
        if not isinstance(uid, str) or not uid:
            where = f"items[{i}].metadata.uid" if "items" in data else "metadata.uid"
            raise doc.enrich(InputError("required field is missing", path=where))
        if uid not in uids:
            continue
        status = item.get("status")
        phase = status.get("phase") if isinstance(status, Mapping) else None
        out[uid] = (dict(item), phase if isinstance(phase, str) else None)
    return out, []


def restart_state_dir(
    directory: Path, *, pods: str | None = None, node: TextInput | None = None,
    sysfs: Path | None = None, kubelet_config: str | None = None,
) -> RestartReport:
    """Restart the kubelet whose state directory is ``directory``: its
    checkpoints, the specs of the pods owning entries from ``pods`` (a
    ``kubectl get pods -o json`` dump; a pod missing there is kept on the
    node as its entries but cannot be re-admitted), on the machine of
    ``node`` (a scenario node mapping) or ``sysfs`` (default ``/sys``), with
    the configuration of ``kubelet_config`` (else inferred from the
    checkpoints, with notes)."""
    files = read_state_dir(directory)
    config = read_kubelet_config_mapping(kubelet_config) if kubelet_config is not None else None
    if node is not None:
        node_doc: dict[str, Any] = node_mapping(node)
    else:
        got = discover(sysfs if sysfs is not None else Path("/sys"))["node"]
        assert isinstance(got, dict)
        node_doc = got
    doc, notes = scenario_document(files, node=node_doc, kubelet_config=config)
    uids: set[str] = set()
    if files.cpu is not None:
        uids |= set(files.cpu.entries) | set(files.cpu.pod_entries)
    if files.memory is not None:
        uids |= set(files.memory.entries) | set(files.memory.pod_entries)
    specs: dict[str, tuple[dict[str, Any], str | None]] = {}
    if pods is not None:
        specs, more = _dump_pods(pods, uids)
        notes += more
    running: list[RunningPod] = []
    for uid, (manifest, phase) in specs.items():
        meta = manifest.get("metadata") or {}
        ref = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        running.append(RunningPod(uid, ref, manifest, phase))
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
    return restart(NodeState(
        node=node_out, kubelet_config=config_out,
        cpu_checkpoint=state.get("cpuManager"), memory_checkpoint=state.get("memoryManager"),
        pods=tuple(running), source=str(directory), base_dir=Path.cwd(), notes=tuple(notes),
    ))

"""Reading a kubelet state directory and a ``kubectl get pods -o json`` dump.

- :func:`read_state_dir`: ``cpu_manager_state`` and ``memory_manager_state``
  (either may be missing, not both), decoded the way the kubelet v1.37
  decodes them at start-up (every format version, checksums verified,
  pod-level entries kept). A file the kubelet would refuse is an
  :class:`~podnuma.errors.InputError` carrying the kubelet's own message
  (``could not restore state from checkpoint: ..., please drain this node
  and delete the ... checkpoint file "DIR/..." before restarting Kubelet``)
  and naming the file.
- The device manager's ``device-plugins/kubelet_internal_checkpoint``, when
  present, read as the kubelet reads it at start: one it cannot read is not
  refused (the kubelet logs that and starts without device state), its
  error is kept for the report.
- :func:`read_pods_dump`: pod UID -> (namespace, name, node) from a
  ``kubectl get pods -o json`` list (``-`` reads standard input).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from podnuma.api.featuregates import FeatureGateReader
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.pod_validation import check_dns_label, check_dns_subdomain, required
from podnuma.cm.checkpoint import CheckpointError
from podnuma.cm.cpumanager import checkpoint as cpu_ckpt
from podnuma.cm.devicemanager import checkpoint as dev_ckpt
from podnuma.cm.memorymanager import checkpoint as mem_ckpt
from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type
from podnuma.golang.json import GoJSONError, JSONNumber, JSONObject, go_json_parse
from podnuma.golang.jsonnumbers import JSONNumberText
from podnuma.inputs.documents import (
    Document,
    field_path_under,
    input_name,
    parse_document,
    read_text,
)
from podnuma.inputs.pods import ConfigSource, config_source
from podnuma.inputs.text import TextInput
from podnuma.machine.cpuset import CPUSet

__all__ = [
    "PodRef",
    "StateFiles",
    "check_dump_pods",
    "checkpoint_pod_uids",
    "exclusive_cpu_sets",
    "read_kubelet_config",
    "read_kubelet_config_mapping",
    "read_pods_dump",
    "read_state_dir",
]

#: the line and column an error's message ends with (of the text it was about)
_LINE_SUFFIX = re.compile(r" \(line \d+, column \d+\)$")

_Data = TypeVar("_Data")
_Data_co = TypeVar("_Data_co", covariant=True)


class _CheckpointDecoder(Protocol[_Data_co]):
    def __call__(self, blob: bytes, *, pod_level_resource_managers: bool) -> _Data_co: ...


@dataclass(frozen=True)
class StateFiles:
    directory: Path
    cpu_raw: bytes | None
    cpu_version: int | None
    cpu: cpu_ckpt.CPUCheckpointData | None
    memory_raw: bytes | None
    memory_version: int | None
    memory: mem_ckpt.MemoryCheckpointData | None
    devices_raw: bytes | None = None
    devices: dev_ckpt.DeviceCheckpointData | None = None

    def raw_object(self, which: str) -> dict[str, Any] | None:
        """The checkpoint file as the JSON object a scenario's ``state:``
        takes (``which``: cpu, memory or devices; ``None`` when absent, or
        for a device checkpoint that is not a JSON object), decoded as the
        kubelet decodes it (Go's ``encoding/json``: invalid UTF-8 and lone
        surrogate escapes are U+FFFD; ``null`` leaves the checkpoint empty,
        as ``{}`` does)."""
        raw = {"cpu": self.cpu_raw, "memory": self.memory_raw}.get(which, self.devices_raw)
        if raw is None:
            return None
        try:
            obj = _plain(go_json_parse(raw))
        except (GoJSONError, ValueError):
            obj = None
        if which == "devices" and not isinstance(obj, dict):
            return None
        if obj is None:
            return {}
        if not isinstance(obj, dict):  # (the reader refused it first: not a checkpoint)
            raise InputError(f"not a JSON object: {type(obj).__name__}")
        return obj


def _plain(value: Any) -> Any:
    """Go's JSON values (:func:`~podnuma.golang.json.go_json_parse`) as
    plain ones: an object a ``dict`` (a key given twice: its last value, as
    Go's decoding into a struct keeps), a number an ``int`` or ``float``
    (one no float holds: its text)."""
    if isinstance(value, JSONObject):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, JSONNumber):
        text = str(value)
        try:
            return int(text)
        except ValueError:
            number = float(text)
            return number if math.isfinite(number) else text
    return value


@dataclass(frozen=True)
class PodRef:
    """A pod of a ``kubectl get pods -o json`` dump: its name, node and
    (left out of comparisons) its manifest as the dump gives it."""

    namespace: str
    name: str
    node: str | None = None
    manifest: dict[str, Any] | None = field(default=None, compare=False, hash=False, repr=False)
    #: the dump it is in and where there (``items[3]``; ``""``: the dump is
    #: the one Pod), for errors about it (:func:`check_dump_pods`)
    dump: Document | None = field(default=None, compare=False, hash=False, repr=False)
    at: str = field(default="", compare=False, hash=False, repr=False)

    def blame(self, err: InputError) -> InputError:
        """``err`` (about the pod's manifest, its path from the pod) as an
        error about the dump: its file, the item's field path, the line."""
        if self.dump is None:
            return err
        message = _LINE_SUFFIX.sub("", err.message)  # (a line of another text)
        return self.dump.enrich(InputError(message, path=field_path_under(self.at, err.path), file=self.dump.name))

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


#: the largest CPU or memory manager checkpoint read, and the most entries
#: (containers' and pods') one may hold. A node runs at most a few hundred
#: containers (``maxPods`` is 110 by default): 10,000 entries are far above
#: any; the kubelet bounds neither, but a hostile file of the 64 MiB input
#: limit held millions of entries, minutes and gigabytes to read and draw.
#: A real checkpoint of 10,000 entries is about 1 MB (CPU) or 2.5 MB (memory).
MAX_CHECKPOINT_BYTES = 4 << 20
MAX_CHECKPOINT_ENTRIES = 10_000


def _read(path: Path, limit: int | None = None) -> bytes | None:
    """A checkpoint file's bytes (``None``: not there), within ``limit``
    bytes (default: the byte limit of the commands' inputs)."""
    from podnuma.inputs.documents import read_regular
    from podnuma.inputs.limits import DEFAULT_LIMITS

    try:
        return read_regular(path, DEFAULT_LIMITS.max_bytes if limit is None else limit)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=str(path)) from None


def read_state_dir(directory: Path) -> StateFiles:
    if not directory.is_dir():
        raise InputError("not a directory", file=str(directory))
    state_dir = str(directory)
    cpu_path = directory / cpu_ckpt.CPU_MANAGER_STATE_FILE
    mem_path = directory / mem_ckpt.MEMORY_MANAGER_STATE_FILE
    from podnuma.inputs.limits import DEFAULT_LIMITS

    limit = min(MAX_CHECKPOINT_BYTES, DEFAULT_LIMITS.max_bytes)  # (the inputs' limit, if lower)
    cpu_raw, mem_raw = _read(cpu_path, limit), _read(mem_path, limit)
    dev_raw = _read(directory / dev_ckpt.DEVICE_CHECKPOINT_DIR / dev_ckpt.DEVICE_CHECKPOINT_FILE)
    if cpu_raw is None and mem_raw is None and dev_raw is None:
        raise InputError(
            f"neither {cpu_ckpt.CPU_MANAGER_STATE_FILE} nor {mem_ckpt.MEMORY_MANAGER_STATE_FILE} is there",
            file=state_dir,
        )
    cpu = mem = None
    cpu_version = mem_version = None
    if cpu_raw is not None:
        cpu_version, cpu = _decode(cpu_raw, cpu_path, state_dir, cpu_ckpt.load_cpu_checkpoint,
                                   cpu_ckpt.decode_cpu_checkpoint, cpu_ckpt.restore_error_message)
        _check_entries(cpu_path, sum(map(len, cpu.entries.values())) + len(cpu.pod_entries))
    if mem_raw is not None:
        mem_version, mem = _decode(mem_raw, mem_path, state_dir, mem_ckpt.load_memory_checkpoint,
                                   mem_ckpt.decode_memory_checkpoint, mem_ckpt.restore_error_message)
        _check_entries(mem_path, sum(map(len, mem.entries.values())) + len(mem.pod_entries))
    devices = dev_ckpt.read_device_checkpoint(dev_raw) if dev_raw is not None else None
    return StateFiles(directory, cpu_raw, cpu_version, cpu, mem_raw, mem_version, mem, dev_raw, devices)


def _check_entries(path: Path, count: int) -> None:
    """``InputError`` for a checkpoint of more than
    :data:`MAX_CHECKPOINT_ENTRIES` entries."""
    if count > MAX_CHECKPOINT_ENTRIES:
        raise InputError(
            f"{count} entries: more than podnuma reads in a checkpoint ({MAX_CHECKPOINT_ENTRIES}; "
            "a node runs at most a few hundred containers)",
            file=str(path),
        )


def _decode(
    raw: bytes,
    path: Path,
    state_dir: str,
    load: Callable[[bytes], tuple[str, int]],
    decode: _CheckpointDecoder[_Data],
    restore_message: Callable[[str, str], str],
) -> tuple[int, _Data]:
    """(format version, data with pod-level entries kept) of a checkpoint
    file, decoded as the kubelet decodes it at start; ``InputError`` naming
    the file, with the kubelet's restore message, when it would refuse it."""
    try:
        _, version = load(raw)
        return version, decode(raw, pod_level_resource_managers=True)
    except CheckpointError as err:
        raise InputError(restore_message(str(err), state_dir), file=str(path)) from None


def checkpoint_pod_uids(
    cpu: cpu_ckpt.CPUCheckpointData | None, memory: mem_ckpt.MemoryCheckpointData | None
) -> set[str]:
    """The pods the CPU and memory manager checkpoints hold entries for
    (container or pod-level)."""
    uids: set[str] = set()
    if cpu is not None:
        uids |= set(cpu.entries) | set(cpu.pod_entries)
    if memory is not None:
        uids |= set(memory.entries) | set(memory.pod_entries)
    return uids


def exclusive_cpu_sets(cpu: cpu_ckpt.CPUCheckpointData) -> list[tuple[str, str | None, CPUSet]]:
    """The exclusive CPU sets of a CPU manager checkpoint as (pod UID,
    container name, CPUs): the containers' sets by pod UID then name, then
    the pod-level sets (container name ``None``) by pod UID."""
    sets: list[tuple[str, str | None, CPUSet]] = []
    for uid in sorted(cpu.entries):
        for name in sorted(cpu.entries[uid]):
            sets.append((uid, name, cpu.entries[uid][name]))
    for uid in sorted(cpu.pod_entries):
        sets.append((uid, None, cpu.pod_entries[uid]))
    return sets


def _required_string(doc: Document, meta: dict[str, Any], key: str, path: str, empty: str) -> str:
    """``meta[key]``, a string that is not empty, or the error naming it in
    the dump: missing (or ``null``, as Go decodes it), not a string (the
    one wording, :func:`~podnuma.fieldkit.wrong_type`), or empty (``Required
    value``, as the pod parser says it, ``empty`` its detail)."""
    value = meta.get(key)
    if value is None:
        raise doc.enrich(InputError("required field is missing", path=path))
    if not isinstance(value, str) or type(value) is JSONNumberText:  # (1e400: a number, kept as its text)
        raise doc.enrich(wrong_type(path, "a string", value))
    if not value:
        raise doc.enrich(required(path, empty))
    return value


def read_pods_dump(path: str | Path) -> dict[str, PodRef]:
    """UID -> pod, from ``kubectl get pods -o json`` (a ``List`` or one Pod;
    ``-`` reads standard input). Every pod's name and namespace are checked
    as the API server checks them (a DNS subdomain, a DNS label: no control
    characters reach a table), its file and field path named."""
    name = input_name(path)
    text = read_text(path, what="pods dump")
    if not text.strip():  # (as every reader says it)
        raise InputError("the pods dump file is empty", file=name)
    doc = parse_document(text, name=name, json_only=True)
    data = doc.data
    if not isinstance(data, dict):
        raise wrong_type("", "a mapping (a kubectl List of pods, or one Pod)", data).in_file(name)
    listed = "items" in data
    items = data.get("items") if listed else [data]
    if not isinstance(items, list):
        raise doc.enrich(wrong_type("items", "a list", items))
    out: dict[str, PodRef] = {}
    for i, item in enumerate(items):
        where = f"items[{i}]." if listed else ""
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict):
            raise doc.enrich(InputError("a pod needs metadata", path=f"{where}metadata"))
        uid = _required_string(doc, meta, "uid", f"{where}metadata.uid", "must not be empty")
        pod_name = _required_string(doc, meta, "name", f"{where}metadata.name", "name or generateName is required")
        namespace = meta.get("namespace")
        if namespace is not None and (not isinstance(namespace, str) or type(namespace) is JSONNumberText):
            raise doc.enrich(wrong_type(f"{where}metadata.namespace", "a string", namespace))
        try:
            check_dns_subdomain(pod_name, f"{where}metadata.name")
            if namespace:
                check_dns_label(namespace, f"{where}metadata.namespace")
        except InputError as e:
            raise doc.enrich(e) from None
        spec = item.get("spec")
        node = spec.get("nodeName") if isinstance(spec, dict) else None
        out[uid] = PodRef(
            namespace if isinstance(namespace, str) and namespace else "default",
            pod_name,
            node if isinstance(node, str) else None,
            item,
            doc,
            where.rstrip("."),
        )
    return out


def check_dump_pods(refs: Iterable[PodRef], gates: FeatureGateReader) -> None:
    """The dump's pods ``refs`` (those a scenario's ``state.pods`` will
    take), validated as ``state.pods`` validates them (the status left
    out); the first error names the dump's file and the pod's field path
    there, not the scenario made of it."""
    for ref in refs:
        if ref.manifest is None:
            continue
        manifest = {k: v for k, v in ref.manifest.items() if k != "status"}
        try:
            # (a dump is JSON text: its numbers as read, as before kubectl's
            # float64 conversion became parse_pod's default with sorted keys)
            parse_pod(manifest, gates=gates, sort_keys=True, numbers="as-read", on_create=False)
        except InputError as e:
            raise ref.blame(e) from None


def read_kubelet_config(path: str | Path) -> ConfigSource:
    """``--kubelet-config`` of the state commands (``-``: standard input):
    a KubeletConfiguration, or a scenario's (inline, or the file its
    ``kubeletConfigFile`` names), checked as the kubelet would load it."""
    source = config_source(TextInput.read(path, what="kubelet configuration"))
    source.decode()
    return source


def read_kubelet_config_mapping(path: str | Path) -> dict[str, Any]:
    """The configuration of :func:`read_kubelet_config`, as written."""
    return dict(read_kubelet_config(path).mapping)

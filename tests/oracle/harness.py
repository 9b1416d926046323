"""Differential harness: one scenario through podnuma and through the
``kubelet-oracle`` (kubelet v1.37.2's own code), and the comparison of the
two documents on every field the kubelet itself produces.

podnuma runs in-process and builds the same document ``podnuma simulate -o
json`` prints. The oracle runs as a subprocess, many scenarios per call
(JSON Lines). A scenario that fails on one side must fail the same way on
the other: both with invalid input, or both refusing to start with the same
kubelet message.

Normalisation covers only what the kubelet itself leaves to chance (see
docs/oracle.md): Go map iteration order (memory block order, aggregated
error lists, the checksums of a memory checkpoint whose block lists depend
on that order, the memory manager's start-up check of some restored
checkpoints, the resource or memory type the memory manager's checks name,
confirmed by running the kubelet code again) and the device manager
picking among equivalent devices (set iteration): devices are compared by their NUMA affinity, not their ids, and
a run that parts by such a pick is compared up to it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "Outcome",
    "run_podnuma",
    "run_oracle",
    "run_oracle_checkpoints",
    "compare",
    "write_scenario",
]

# The fields of the output document the kubelet itself produces.
NODE_FIELDS = ("name", "cpus", "numaNodes", "reservedCpus")
STEP_FIELDS = (
    "index",
    "op",
    "pod",
    "podUID",
    "container",
    "admitted",
    "reason",
    "message",
    "qosClass",
    "podAllocation",
    "containers",
    "defaultCpuSet",
)
CONTAINER_FIELDS = ("name", "type", "cpus", "mems", "isolation", "memory", "devices", "topologyHint")
CHECKPOINT_FILES = {
    "cpuManager": "cpu_manager_state",
    "memoryManager": "memory_manager_state",
    "deviceManager": "device-plugins/kubelet_internal_checkpoint",
}

_STARTUP_PREFIX = "error: kubelet would not start: "


@dataclass
class Outcome:
    """What one engine made of a scenario: a document, or a failure of a
    kind (``input``: invalid input; ``startup``: the kubelet would not
    start, ``message`` is the kubelet's; ``crash``: anything else)."""

    doc: dict[str, Any] | None = None
    kind: str = "ok"
    message: str = ""
    files: dict[str, bytes] = field(default_factory=dict)


def write_scenario(doc: Mapping[str, Any], path: Path) -> Path:
    """Write a scenario: JSON for ``.json`` paths (much faster to load),
    else YAML."""
    if path.suffix == ".json":
        path.write_text(json.dumps(doc), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(dict(doc), sort_keys=False), encoding="utf-8")
    return path


# -- podnuma ---------------------------------------------------------------------------


def _load_fast(path: Path) -> Any:
    """A JSON scenario without building the YAML node tree podnuma keeps
    for line numbers in messages (most of the load time); the same
    validation otherwise."""
    from podnuma.inputs.scenario import load_scenario

    try:
        from podnuma.inputs.scenario import Document, _load
    except ImportError:  # the loader moved: take the ordinary path
        return load_scenario(path)
    name = str(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    return _load(Document(name, data, None), base_dir=path.parent)


def run_podnuma(path: Path) -> Outcome:
    """podnuma in-process, as ``podnuma simulate -o json`` runs it."""
    from podnuma.cm.checkpoint import CheckpointError
    from podnuma.errors import InputError, KubeletStartupError
    from podnuma.inputs.scenario import load_scenario
    from podnuma.scenario.document import build_document
    from podnuma.scenario.run import run_scenario

    try:
        result = run_scenario(_load_fast(path) if path.suffix == ".json" else load_scenario(path))
    except InputError as e:
        return Outcome(kind="input", message=str(e))
    except CheckpointError as e:
        return Outcome(kind="startup", message=str(e))
    except KubeletStartupError as e:
        return Outcome(kind="startup", message=str(getattr(e, "message", e)))
    except Exception as e:  # noqa: BLE001 - a podnuma bug is a mismatch, not a test crash
        return Outcome(kind="crash", message=f"{type(e).__name__}: {e}")
    doc = json.loads(json.dumps(build_document(result)))
    return Outcome(doc=doc, files=dict(result.checkpoint_files))


# -- the oracle ------------------------------------------------------------------------


def _oracle_failure(line: str, file: str) -> Outcome:
    text = line.strip()
    if text.startswith(_STARTUP_PREFIX):
        msg = text[len(_STARTUP_PREFIX) :]
        suffix = f" ({file})"
        if msg.endswith(suffix):
            msg = msg[: -len(suffix)]
        return Outcome(kind="startup", message=msg)
    if text.startswith("error: ") and "internal error" not in text:
        # invalid input names the file and the field path
        return Outcome(kind="input", message=text)
    return Outcome(kind="crash", message=text)


def run_oracle(binary: str, paths: Sequence[Path], timeout: float = 600.0) -> list[Outcome]:
    """Every scenario through the oracle in one process (JSON Lines)."""
    if not paths:
        return []
    args = [binary, "simulate", *[str(p) for p in paths]]
    if len(paths) == 1:
        # one file: the document on stdout, or one error line on stderr
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode == 0:
            return [Outcome(doc=json.loads(proc.stdout))]
        err = proc.stderr.strip()
        if proc.returncode == 2 and "goroutine " in err:
            return [Outcome(kind="crash", message="kubelet-oracle panicked: " + _panic_summary(err))]
        return [_oracle_failure(err.splitlines()[-1] if err else f"exit {proc.returncode}", str(paths[0]))]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        # one scenario never finished: every scenario alone, each bounded
        return [_alone(binary, p) for p in paths]
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or len(lines) != len(paths):
        # the oracle died on one scenario (a panic): keep what it wrote,
        # run the culprit alone (reported as a crash) and go on after it
        done = len(lines)
        head = run_oracle(binary, paths[:done], timeout) if done else []
        culprit = run_oracle(binary, [paths[done]], timeout)
        rest = run_oracle(binary, paths[done + 1 :], timeout)
        return [*head, *culprit, *rest]
    out: list[Outcome] = []
    for path, line in zip(paths, lines, strict=True):
        obj = json.loads(line)
        if set(obj) == {"file", "error"}:
            out.append(_oracle_failure(obj["error"], str(path)))
        else:
            out.append(Outcome(doc=obj))
    return out


def _panic_summary(stderr: str, frames: int = 3) -> str:
    """A Go panic's first line and the functions of the running goroutine's
    first ``frames`` frames, innermost first and joined by `` < ``, e.g.
    ``panic: runtime error: ... in k8s.io/kubernetes/pkg/kubelet/cm/
    memorymanager.(*staticPolicy).calculateHints.func1 < .../bitmask.
    IterateBitMasks.func1 < ...`` (a panic inside a helper, such as
    ``bitmask.And``, is named by the caller as well)."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("goroutine "):
            calls = [ln.strip() for ln in lines[i + 1 :: 2][:frames] if ln.strip() and not ln.startswith("\t")]
            if calls:
                names = [c.split("(0x")[0].split("({")[0].rstrip("(") for c in calls]
                return f"{lines[0]} in {' < '.join(names)}"
    return lines[0]


#: How podnuma's rejection names a place where the kubelet's own code
#: panics (``podnuma.cm.admission.KubeletPanic``).
KUBELET_PANICS = "kubelet v1.37 panics here"


def reports_kubelet_panic(outcome: Outcome) -> bool:
    """podnuma rejected a pod where the kubelet's own code panics (the
    kubelet's run ends at that step)."""
    steps = (outcome.doc or {}).get("steps") or []
    return any(KUBELET_PANICS in str(st.get("message") or "") for st in steps if isinstance(st, Mapping))


def _kubelet_panic(mine: Outcome, theirs: Outcome) -> bool:
    """podnuma reported a kubelet panic (its first such step) where the
    oracle died of one: the same runtime error, in the upstream function
    podnuma names. Nothing else can be compared: the kubelet's run ends
    there."""
    if mine.kind != "ok" or theirs.kind != "crash" or mine.doc is None:
        return False
    for st in mine.doc.get("steps") or []:
        message = str(st.get("message") or "") if isinstance(st, Mapping) else ""
        if KUBELET_PANICS not in message:
            continue
        m = re.search(
            r"\] (\w+): .*: ((?:runtime error|interface conversion): .+) \(" + re.escape(KUBELET_PANICS), message
        )
        if m is None:
            return False
        where, error = m.groups()
        panicked = re.search(r"panic: (.+?)(?:\n|$| in )", theirs.message)
        frames = theirs.message.rsplit(" in ", 1)[-1].split(" < ")
        return (
            panicked is not None
            and panicked.group(1).startswith(error.split(" [")[0])
            and any(re.search(r"\." + re.escape(where) + r"(\.|$)", frame) for frame in frames)
        )
    return False


def _alone(binary: str, path: Path, timeout: float = 60.0) -> Outcome:
    try:
        return run_oracle(binary, [path], timeout)[0]
    except subprocess.TimeoutExpired:
        return Outcome(kind="hang", message=f"kubelet-oracle did not finish in {timeout:.0f} s")


def run_oracle_checkpoints(binary: str, path: Path, timeout: float = 120.0) -> Outcome:
    """One scenario with ``--checkpoint-dir``: the document and the bytes of
    the checkpoint files the real state packages wrote."""
    with tempfile.TemporaryDirectory(prefix="oracle-ckpt-") as d:
        proc = subprocess.run(
            [binary, "simulate", str(path), "-o", "json", "--checkpoint-dir", d],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode == 2 and "goroutine " in proc.stderr:
            return Outcome(kind="crash", message="kubelet-oracle panicked: " + _panic_summary(proc.stderr.strip()))
        if proc.returncode != 0:
            last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
            return _oracle_failure(last, str(path))
        root = Path(d)
        files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
        return Outcome(doc=json.loads(proc.stdout), files=files)


# -- normalisation ---------------------------------------------------------------------


def _blocks(blocks: Any) -> Any:
    """Memory blocks in a fixed order: the kubelet builds block lists by
    ranging over a Go map of resource names."""
    if not isinstance(blocks, list):
        return blocks
    return sorted(blocks, key=lambda b: json.dumps(b, sort_keys=True))


def device_numa(scenario: Mapping[str, Any]) -> dict[str, dict[str, tuple[int, ...]]]:
    """resource -> device id -> its NUMA nodes, from the scenario's node."""
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    devices = (scenario.get("node") or {}).get("devices") or {}
    for res, items in devices.items():
        out[res] = {str(d["id"]): tuple(sorted(d.get("numaNodes") or ())) for d in items}
    return out


def _any_numa(container: Mapping[str, Any]) -> bool:
    """The topology manager stored "any NUMA node" for the container (a nil
    mask, as under policy none)."""
    hint = container.get("topologyHint")
    return isinstance(hint, Mapping) and hint.get("numaNodes") is None


def _devices(
    devs: Any, numa: Mapping[str, Mapping[str, tuple[int, ...]]], any_numa: bool = False
) -> Any:
    """Devices by NUMA affinity: the device manager takes any of the
    eligible devices (Go set iteration), so ids are not comparable. With no
    NUMA affinity stored for the container every free device is eligible,
    whatever its NUMA node: then only the count per resource is."""
    if not isinstance(devs, dict):
        return devs
    if any_numa:
        return {res: len(ids) for res, ids in sorted(devs.items()) if ids}
    return {
        res: sorted(str(numa.get(res, {}).get(str(i), ("?", str(i)))) for i in ids)
        for res, ids in sorted(devs.items())
        if ids
    }


def _device_classes(container: Mapping[str, Any], numa: Mapping[str, Mapping[str, tuple[int, ...]]]) -> Any:
    """Per resource: how many devices the container got, and how many of
    them lie on a NUMA node of its stored affinity (the device manager's
    "aligned" set: a device counts when any of its NUMA nodes is in the
    mask; one without NUMA nodes never does)."""
    devs = container.get("devices")
    if not isinstance(devs, dict):
        return devs
    hint = container.get("topologyHint")
    mask = set((hint or {}).get("numaNodes") or ()) if isinstance(hint, Mapping) else set()
    out = {}
    for res, ids in sorted(devs.items()):
        if not ids:
            continue
        aligned = sum(1 for i in ids if mask & set(numa.get(res, {}).get(str(i), ())))
        out[res] = {"count": len(ids), "aligned": aligned}
    return out


def _random_device_pick(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    mine: Mapping[str, Any],
    theirs: Mapping[str, Any],
    numa: Mapping[str, Mapping[str, tuple[int, ...]]],
) -> int | None:
    """The index of the step where the two runs part by a random device
    pick, or None when they differ in some other way.

    The device manager takes a container's devices from the free devices
    on its affinity's NUMA nodes by ranging over a Go set: when there are
    more of them than it needs, which ones it takes is chance, and from
    then on the free devices (so later hints) may differ. The two runs part
    that way when every step before agrees exactly and the first step that
    differs agrees once devices are compared by count and by how many lie
    in the container's affinity.
    """
    sa, sb = a.get("steps") or [], b.get("steps") or []
    if len(sa) != len(sb) or a.get("node") != b.get("node"):
        return None
    for i, (x, y) in enumerate(zip(sa, sb, strict=True)):
        if x == y:
            continue
        xs = {k: v for k, v in x.items() if k != "containers"}
        ys = {k: v for k, v in y.items() if k != "containers"}
        if xs != ys:
            return None
        ca = (mine.get("steps") or [])[i].get("containers") or []
        cb = (theirs.get("steps") or [])[i].get("containers") or []
        if len(ca) != len(cb):
            return None
        for p, q, pn, qn in zip(ca, cb, x.get("containers") or [], y.get("containers") or [], strict=True):
            if {k: v for k, v in pn.items() if k != "devices"} != {k: v for k, v in qn.items() if k != "devices"}:
                return None
            if _device_classes(p, numa) != _device_classes(q, numa):
                return None
        return i
    return None


_NOT_DEVICES = ("cpu", "memory", "ephemeral-storage", "pods")


def _device_counts(step: Mapping[str, Any]) -> Any:
    """A normalised step with each container's devices as counts."""
    out = dict(step)
    out["containers"] = [
        {**c, "devices": {r: len(ids) for r, ids in (c.get("devices") or {}).items()}}
        if isinstance(c, Mapping) else c
        for c in step.get("containers") or []
    ]
    return out


def _reuse_pick(a: Mapping[str, Any], b: Mapping[str, Any], scenario: Mapping[str, Any]) -> int | None:
    """The index of the step where two normalised documents part by the one
    device pick that stays chance, or None when they differ otherwise.

    The device manager hands a regular init container's devices on to the
    containers after it by ranging over a Go set
    (``allocateRemainingFrom(reusableDevices)``), whatever their NUMA node,
    and asks no plugin: when there are more of them than a container needs,
    which it gets is chance, and from then on the free devices (so later
    steps) may differ between two runs of the kubelet itself. The runs part
    that way when every step before agrees exactly, the first step that
    differs admits such a pod, and it agrees once devices are counted."""
    sa, sb = a.get("steps") or [], b.get("steps") or []
    if len(sa) != len(sb) or a.get("node") != b.get("node"):
        return None
    for i, (x, y) in enumerate(zip(sa, sb, strict=True)):
        if x == y:
            continue
        if _reuses_init_devices(scenario, i) and _device_counts(x) == _device_counts(y):
            return i
        return None
    return None


def _device_reuse_pick_only(scenario: Mapping[str, Any], mine: bytes | None, theirs: bytes | None) -> bool:
    """The two device checkpoints differ only by the pick among a regular
    init container's devices handed on to a later container (see
    :func:`_reuse_pick`): the same entries in the same order, each with the
    same devices except for containers of a pod whose step reuses init
    devices, whose devices on each side are as many and lie within that
    side's devices of the pod's regular init containers for the resource
    (the pick ignores NUMA nodes, so the NUMA keys may differ). The
    documents cannot show it where devices are compared by count (no NUMA
    affinity stored, as under topology manager policy ``none``) or where
    the pod is rejected after the pick (a rejected pod's containers show
    no devices, while its entries stay in the checkpoint)."""
    if mine is None or theirs is None:
        return False
    try:
        a, b = json.loads(mine), json.loads(theirs)
        ea, eb = a["Data"]["PodDeviceEntries"] or [], b["Data"]["PodDeviceEntries"] or []
        if a["Data"].get("RegisteredDevices") != b["Data"].get("RegisteredDevices") or len(ea) != len(eb):
            return False
        steps = scenario.get("steps") or []
        uids = {
            str(((st.get("addPod") or {}).get("metadata") or {}).get("uid")): i
            for i, st in enumerate(steps) if isinstance(st, Mapping) and isinstance(st.get("addPod"), Mapping)
        }

        def within(entries: list[Any], e: Mapping[str, Any]) -> bool:
            inits = _regular_init_names(scenario, uids.get(str(e["PodUID"]), -1))
            ids = {d for devs in e["DeviceIDs"].values() for d in devs}
            held = {
                d
                for o in entries
                if o is not e and o["PodUID"] == e["PodUID"] and o["ResourceName"] == e["ResourceName"]
                and o["ContainerName"] in inits
                for devs in o["DeviceIDs"].values()
                for d in devs
            }
            return ids <= held

        def count(e: Mapping[str, Any]) -> int:
            return sum(len(devs) for devs in e["DeviceIDs"].values())

        picked = False
        for x, y in zip(ea, eb, strict=True):
            if {k: v for k, v in x.items() if k != "DeviceIDs"} != {k: v for k, v in y.items() if k != "DeviceIDs"}:
                return False
            if x["DeviceIDs"] == y["DeviceIDs"]:
                continue
            if (
                not _reuses_init_devices(scenario, uids.get(str(x["PodUID"]), -1))
                or count(x) != count(y)
                or not within(ea, x)
                or not within(eb, y)
            ):
                return False
            picked = True
        return picked
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


def _regular_init_names(scenario: Mapping[str, Any], index: int) -> set[str]:
    """The names of the regular (not restartable) init containers of the
    pod step ``index`` adds."""
    steps = scenario.get("steps") or []
    if not 0 <= index < len(steps) or not isinstance(steps[index], Mapping):
        return set()
    pod = steps[index].get("addPod")
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    return {
        str(c.get("name"))
        for c in (spec or {}).get("initContainers") or []
        if isinstance(c, Mapping) and c.get("restartPolicy") != "Always"
    }


def _reuses_init_devices(scenario: Mapping[str, Any], index: int) -> bool:
    """Step ``index`` admits a pod whose regular init containers hold
    devices: the device manager hands them on to later containers by
    ranging over a Go set (``allocateRemainingFrom(reusableDevices)``), the
    one device pick no plugin is asked about."""
    steps = scenario.get("steps") or []
    if not 0 <= index < len(steps) or not isinstance(steps[index], Mapping):
        return False
    pod = steps[index].get("addPod")
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    for c in (spec or {}).get("initContainers") or []:
        if not isinstance(c, Mapping) or c.get("restartPolicy") == "Always":
            continue
        res = c.get("resources") or {}
        for part in ("limits", "requests"):
            for name in res.get(part) or {}:
                if name not in _NOT_DEVICES and not str(name).startswith("hugepages-"):
                    return True
    return False


def _error_chunks(message: str) -> Any:
    """An aggregated error ("[a, b]", possibly after a prefix such as
    "failed to set feature gates ...: [a, b]") is built from a Go map:
    compare its parts as a multiset (split at the aggregate's own level:
    a part may hold a list of its own)."""
    if not message.endswith("]"):
        return message
    depth = 0
    start = -1
    for i, ch in enumerate(message):
        if ch == "[":
            if depth == 0 and (i == 0 or message[i - 2 : i] == ": "):
                start = i
                break
            depth += 1
        elif ch == "]":
            depth -= 1
    if start < 0:
        return message
    inner = message[start + 1 : -1]
    parts: list[str] = []
    depth, last = 0, 0
    for i, ch in enumerate(inner):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0 and inner.startswith(", ", i):
            parts.append(inner[last:i])
            last = i + 2
    parts.append(inner[last:])
    if depth != 0 or len(parts) < 2:
        return message
    return [message[:start], *sorted(parts)]


_GO_POINTER = re.compile(r"\{0x[0-9a-f?]+\}")
_NODE_ALLOCATABLE = "invalid Node Allocatable configuration. "


def _startup_message(message: str) -> Any:
    """A start-up message, normalised for what Go leaves to chance: the
    parts of an aggregated error, the reservations ``validateNodeAllocatable``
    lists (a Go map walk, one sentence per resource) and the address Go's
    ``%v`` prints for a quantity held as an ``inf.Dec``."""
    message = _GO_POINTER.sub("{0x?}", message)
    if message.startswith(_NODE_ALLOCATABLE):
        parts = message[len(_NODE_ALLOCATABLE) :].split(" Resource ")
        return [_NODE_ALLOCATABLE, *sorted(p.removeprefix("Resource ") for p in parts)]
    return _error_chunks(message)


def _memory_checkpoint(obj: Any) -> tuple[Any, bool]:
    """The memory checkpoint with block lists sorted; True when some block
    list had more than one block (its order, hence the checksums and the
    ``data`` string, then depends on Go map order)."""
    multi = False

    def walk(x: Any) -> Any:
        nonlocal multi
        if isinstance(x, dict):
            out = {}
            for k, v in x.items():
                if k in ("memoryBlocks",) or (isinstance(v, list) and v and isinstance(v[0], dict) and "numaAffinity" in v[0]):
                    if len(v) > 1:
                        multi = True
                    out[k] = _blocks([walk(b) for b in v])
                else:
                    out[k] = walk(v)
            return out
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    if not isinstance(obj, dict):
        return obj, False
    norm = walk(obj)
    if isinstance(obj.get("data"), str):
        try:
            data, m2 = _memory_checkpoint(json.loads(obj["data"]))
        except ValueError:
            data, m2 = obj["data"], False
        norm["data"] = data
        multi = multi or m2
    if multi:
        for k in ("checksum", "dataChecksum"):
            norm.pop(k, None)
    return norm, multi


def _device_ids(devs: Any) -> Any:
    """Devices by id (each resource's ids sorted: the kubelet hands a set)."""
    if not isinstance(devs, dict):
        return devs
    return {res: sorted(str(i) for i in ids) for res, ids in sorted(devs.items()) if ids}


def normalise(
    doc: Mapping[str, Any], numa: Mapping[str, Mapping[str, tuple[int, ...]]], *, device_ids: bool = True
) -> dict[str, Any]:
    """The kubelet-produced fields of a document, normalised. Devices are
    compared by id (the oracle's device plugin makes the picks the device
    manager leaves to it deterministic); ``device_ids=False`` compares them
    by NUMA affinity instead."""
    node = doc.get("node") or {}
    out: dict[str, Any] = {"node": {k: node.get(k) for k in NODE_FIELDS}}
    steps = []
    for s in doc.get("steps") or []:
        st: dict[str, Any] = {}
        for k in STEP_FIELDS:
            if k == "container" and k not in s:
                continue
            v = s.get(k)
            if k == "podAllocation" and isinstance(v, dict):
                v = {"cpus": v.get("cpus"), "memory": _blocks(v.get("memory"))}
            elif k == "containers":
                v = [
                    {
                        ck: (
                            _blocks(c.get(ck))
                            if ck == "memory"
                            else (_device_ids(c.get(ck)) if device_ids else _devices(c.get(ck), numa, _any_numa(c)))
                            if ck == "devices"
                            else c.get(ck)
                        )
                        for ck in CONTAINER_FIELDS
                    }
                    for c in (v or [])
                ]
            elif k == "message" and isinstance(v, str):
                v = _error_chunks(v)
            st[k] = v
        steps.append(st)
    out["steps"] = steps
    ck = doc.get("checkpoints") or {}
    out["checkpoints"] = {
        "cpuManager": ck.get("cpuManager"),
        "memoryManager": _memory_checkpoint(ck.get("memoryManager"))[0],
    }
    return out


# -- comparison ------------------------------------------------------------------------


def _diff(a: Any, b: Any, path: str, out: list[str], limit: int = 20) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(dict.fromkeys([*a.keys(), *b.keys()])):
            if k not in a:
                out.append(f"{path}.{k}: missing in podnuma (oracle {json.dumps(b[k])[:200]})")
            elif k not in b:
                out.append(f"{path}.{k}: missing in oracle (podnuma {json.dumps(a[k])[:200]})")
            else:
                _diff(a[k], b[k], f"{path}.{k}", out, limit)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out, limit)
        return
    if a != b:
        out.append(f"{path}: podnuma {json.dumps(a)[:300]} != oracle {json.dumps(b)[:300]}")


def _same_inline_state(
    scenario: Mapping[str, Any], key: str, mine: bytes | None, theirs: bytes | None
) -> bool:
    """The two files hold the same object and the scenario gave that
    manager's starting checkpoint as an inline object.

    The kubelet leaves a checkpoint file as it found it until the state
    changes, so after steps that changed nothing the file is the starting
    one. A scenario's inline ``state`` object has no byte form of its own
    (YAML and JSON mappings carry no key order the oracle's reader keeps):
    the oracle writes it with sorted keys, podnuma in the kubelet's field
    order. Only that byte order is set aside; the values, checksums
    included, must still be equal.
    """
    state = scenario.get("state")
    if not isinstance(state, Mapping) or not isinstance(state.get(key), Mapping):
        return False
    if mine is None or theirs is None:
        return False
    try:
        return bool(json.loads(mine) == json.loads(theirs))
    except ValueError:
        return False


_POD_STEP = re.compile(r"steps\[(\d+)\]\.addPod(?:\.|: )")
_POSITION = re.compile(r" \(line \d+, column \d+\)$")


def pod_refusal(message: str) -> tuple[int, str] | None:
    """(step index, ``FIELD: ERROR``) of an invalid-input message about a
    step's pod, or None."""
    m = _POD_STEP.search(message)
    if m is None:
        return None
    rest = _POSITION.sub("", message[m.end():].strip())
    return int(m.group(1)), rest


PLACEHOLDER_IMAGE = "scenario.invalid/placeholder"


def pod_refusal_diffs(binary: str, mine: Outcome, theirs: Outcome, scenario: Mapping[str, Any]) -> list[str]:
    """A scenario both engines refuse as invalid input: when podnuma's
    reason is a step's pod, the oracle must refuse the same step, and
    podnuma's error must be one of the API server's errors for that pod
    (``kubelet-oracle validate`` with the scenario's gates -- its API
    server's, with an ``apiServer`` section --, containers
    without an image given the oracle's placeholder, as its scenario reader
    does). Other invalid input is not compared (each engine words its own)."""
    from tests.oracle.validation import PodnumaVerdict, compare_verdicts, validate_oracle

    ours = pod_refusal(mine.message)
    if ours is None:
        return []
    step, error = ours
    theirs_at = pod_refusal(theirs.message)
    if theirs_at is None or theirs_at[0] != step:
        return [f"pod refused: podnuma at step {step} ({mine.message[:300]}) != oracle ({theirs.message[:300]})"]
    steps = scenario.get("steps") or []
    pod = (steps[step] if step < len(steps) else {}).get("addPod")
    config = scenario.get("kubeletConfig")
    if not isinstance(pod, Mapping) or not isinstance(config, Mapping):
        return []
    pod = json.loads(json.dumps(pod))
    spec = pod.get("spec")
    if isinstance(spec, dict):
        for kind in ("initContainers", "containers", "ephemeralContainers"):
            for c in spec.get(kind) or []:
                if isinstance(c, dict) and not c.get("image"):
                    c["image"] = PLACEHOLDER_IMAGE
    gates = dict(config.get("featureGates") or {})
    api = scenario.get("apiServer")
    if isinstance(api, Mapping):  # the API server's own gates
        gates = dict(api.get("featureGates") or {})
    verdict = validate_oracle(binary, [pod], gates)[0]
    return [f"step {step}: {d}" for d in compare_verdicts(PodnumaVerdict(error=error), verdict, gates)]

MEMORY_STATE_DIFFERS = "[memorymanager] the expected machine state is different from the real one"


def memory_validation_depends_on_order(scenario: Mapping[str, Any]) -> bool:
    """The Static memory manager's start-up check of a restored checkpoint
    gives different answers in different runs of the kubelet.

    ``validateState`` rebuilds the machine state from the assignments by
    ranging over Go maps (pods, then each pod's containers) and compares
    it with the checkpoint's. Each block it visits sets the ``cells`` of
    every NUMA node of its affinity, so a node that appears in blocks with
    different affinity lists ends up with the cells of whichever block came
    last: map order. (With one affinity list per node the greedy fill is
    the same in every order.) podnuma walks the maps sorted and so gives
    one of the kubelet's possible answers.
    """
    state = scenario.get("state")
    memory = state.get("memoryManager") if isinstance(state, Mapping) else None
    if not isinstance(memory, Mapping):
        return False
    seen: dict[int, tuple[int, ...]] = {}
    groups: list[Any] = []
    for containers in (memory.get("entries") or {}).values():
        for blocks in (containers or {}).values():
            groups.extend(blocks or [])
    for blocks in (memory.get("podEntries") or {}).values():
        groups.extend(blocks or [])
    for block in groups:
        affinity = tuple((block or {}).get("numaAffinity") or ())
        for nid in affinity:
            if seen.setdefault(nid, affinity) != affinity:
                return True
    return False


_INSUFFICIENT = re.compile(r"^Pod was rejected: Node didn't have enough resource: (\S+), ")
_FIXED_ORDER = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})


def _requested(pod: Any) -> set[str]:
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    if not isinstance(spec, Mapping):
        return set()
    out: set[str] = set()
    sources = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    for c in [*(x.get("resources") for x in sources if isinstance(x, Mapping)), spec.get("resources")]:
        if isinstance(c, Mapping):
            for side in ("requests", "limits"):
                out.update(k for k in (c.get(side) or {}) if isinstance(k, str))
    return out


def _scalar_fit_order(
    a: dict[str, Any], b: dict[str, Any], scenario: Mapping[str, Any], notes: list[str] | None
) -> None:
    """The node-allocatable fit names one insufficient resource: cpu,
    memory and ephemeral-storage are checked in that order, then the
    pod's other resources (hugepages, extended resources) by ranging over
    a Go map (``fitsRequest``: ``podRequest.ScalarResources``), and the
    kubelet reports the first failure. When the two runs name two such
    resources the pod requests both of, they differ by map order alone:
    the oracle's reason and message are taken as podnuma's."""
    steps = scenario.get("steps") or []
    for i, (x, y) in enumerate(zip(a.get("steps") or [], b.get("steps") or [], strict=False)):
        mx = _INSUFFICIENT.match(str(x.get("message") or ""))
        my = _INSUFFICIENT.match(str(y.get("message") or ""))
        if not mx or not my or mx.group(1) == my.group(1):
            continue
        names = {mx.group(1), my.group(1)}
        pod = steps[i].get("addPod") if i < len(steps) and isinstance(steps[i], Mapping) else None
        if names & _FIXED_ORDER or not names <= _requested(pod):
            continue
        y["reason"], y["message"] = x.get("reason"), x.get("message")
        if notes is not None:
            notes.append(f"scalar resource fit order at step {i}")


def compare(
    mine: Outcome,
    theirs: Outcome,
    scenario: Mapping[str, Any],
    *,
    check_bytes: bool = False,
    notes: list[str] | None = None,
) -> list[str]:
    """The differences between podnuma's and the oracle's outcome (empty
    when they agree). Where the two runs part only because the device
    manager picked at random among the devices of a container's NUMA
    affinity (see :func:`_random_device_pick`), nothing after that pick is
    compared and a line saying so goes to ``notes``."""
    if mine.kind != "ok" or theirs.kind != "ok":
        failed, other = (theirs, mine) if theirs.kind == "startup" else (mine, theirs)
        if (
            failed.kind == "startup"
            and (other.kind == "ok" or (other.kind == "input" and ": steps[" in other.message))
            and failed.message.endswith(MEMORY_STATE_DIFFERS)
            and memory_validation_depends_on_order(scenario)
        ):
            # the kubelet itself starts on this checkpoint in some runs and
            # refuses it in others (Go map order): either answer is its own
            # (a run that starts may then meet a step naming a pod that the
            # scenario's generator, seeing the refusal, could not check)
            if notes is not None:
                notes.append("memory state check depends on map order")
            return []
        if _kubelet_panic(mine, theirs):
            if notes is not None:
                notes.append("kubelet panic confirmed")
            return []
        if mine.kind != theirs.kind:
            return [
                f"outcome: podnuma {mine.kind} ({mine.message[:300]}) != "
                f"oracle {theirs.kind} ({(theirs.message or '')[:300]})"
            ]
        if mine.kind == "startup" and _startup_message(mine.message) != _startup_message(theirs.message):
            return [f"start-up error: podnuma {mine.message!r} != oracle {theirs.message!r}"]
        if mine.kind == "crash":
            return [f"both crashed: podnuma {mine.message} / oracle {theirs.message}"]
        return []
    assert mine.doc is not None and theirs.doc is not None
    numa = device_numa(scenario)
    a, b = normalise(mine.doc, numa), normalise(theirs.doc, numa)
    _scalar_fit_order(a, b, scenario, notes)
    diffs: list[str] = []
    _diff(a, b, "", diffs)
    if diffs:
        step = _reuse_pick(a, b, scenario)
        if step is not None:
            if notes is not None:
                notes.append(f"random device pick at step {step}: later steps not compared")
            return []
    if check_bytes and not diffs:
        for key, name in CHECKPOINT_FILES.items():
            mb, tb = mine.files.get(name), theirs.files.get(name)
            if mb == tb:
                continue
            if _same_inline_state(scenario, key, mb, tb):
                continue  # the kubelet kept the file it found; an inline object has no byte order
            if key == "deviceManager" and _device_reuse_pick_only(scenario, mb, tb):
                if notes is not None:
                    notes.append("random device pick (a regular init container's devices handed on): "
                                 "device checkpoint compared up to it")
                continue
            if key == "memoryManager" and mb is not None and tb is not None:
                try:
                    _, multi = _memory_checkpoint(json.loads(tb))
                except ValueError:
                    multi = False
                if multi:
                    continue  # block order (and so the checksums) follow Go map order
            diffs.append(
                f"checkpoint file {name}: bytes differ: podnuma {(mb or b'')[:300]!r} != oracle {(tb or b'')[:300]!r}"
            )
    return diffs


# -- answers Go map order picks among ---------------------------------------------------

#: ``validatePodScopeResources`` (memory manager, pod-level resources) ranges
#: over the pod's budget (a Go map) and names the first resource whose pool
#: is empty: with two such resources, either.
_POD_BUDGET = re.compile(
    r"pod rejected, (?:sum of exclusive container (\S+) requests equals pod budget"
    r"|pod has shared init containers but no (\S+) available for them)"
)
#: ``validateReservedMemory`` ranges over the memory types (a Go map) and
#: names the first whose reservedMemory total differs from Node Allocatable's.
_RESERVED_TOTAL = re.compile(
    r'the total amount "[^"]*" of type "[^"]*" is not equal to the value "[^"]*" '
    r"determined by Node Allocatable feature"
)
_NAMED = "<named by map order>"

#: How many more runs of the kubelet code :func:`compare_resampled` asks for
#: an answer Go map order picks (each candidate comes first in a run with
#: probability at least 1/8, Go's map group size: 200 runs miss one with
#: probability below 1e-11).
RESAMPLES = 200


def _blank_map_order(doc: Mapping[str, Any] | None) -> Any:
    """``doc`` with the resource a map-order message names blanked."""
    if doc is None:
        return None
    out = json.loads(json.dumps(doc))
    for st in out.get("steps") or []:
        if isinstance(st, dict) and isinstance(st.get("message"), str):
            st["message"] = _POD_BUDGET.sub(lambda m: m.group(0).replace(m.group(1) or m.group(2), _NAMED),
                                            st["message"])
    return out


def map_order_answer(mine: Outcome, theirs: Outcome, scenario: Mapping[str, Any]) -> str | None:
    """Where the two outcomes differ only in an answer the kubelet picks by
    Go map order, what that answer is ("validatePodScopeResources" or
    "validateReservedMemory"); None otherwise. Whether podnuma's answer is
    one the kubelet gives is for :func:`compare_resampled` to find out."""
    if mine.kind == theirs.kind == "startup":
        a, b = _RESERVED_TOTAL.search(mine.message), _RESERVED_TOTAL.search(theirs.message)
        if a and b and mine.message[: a.start()] == theirs.message[: b.start()]:
            return "validateReservedMemory"
        return None
    if mine.kind != "ok" or theirs.kind != "ok":
        return None
    blanked = (Outcome(doc=_blank_map_order(mine.doc)), Outcome(doc=_blank_map_order(theirs.doc)))
    if blanked[0].doc == mine.doc or compare(*blanked, scenario):
        return None
    return "validatePodScopeResources"


def compare_resampled(
    binary: str,
    path: Path,
    mine: Outcome,
    theirs: Outcome,
    scenario: Mapping[str, Any],
    *,
    check_bytes: bool = False,
    notes: list[str] | None = None,
) -> list[str]:
    """:func:`compare`, except where the outcomes part on an answer the
    kubelet picks by Go map order (:func:`map_order_answer`): then the
    kubelet code runs the scenario again, :data:`RESAMPLES` times, and
    podnuma's outcome stands if it is one of the kubelet's (the same
    document, and with ``check_bytes`` the same checkpoint bytes of that
    run). Only answers the kubelet itself gives are accepted."""
    diffs = compare(mine, theirs, scenario, check_bytes=check_bytes, notes=notes)
    if not diffs:
        return diffs
    where = map_order_answer(mine, theirs, scenario)
    if where is None:
        return diffs
    for other in run_oracle(binary, [path] * RESAMPLES):
        if compare(mine, other, scenario):
            continue
        if check_bytes and other.kind == "ok":
            # the answer is a message no checkpoint holds: the first run's
            # bytes stand for this one's
            other = Outcome(doc=other.doc, files=theirs.files)
            if compare(mine, other, scenario, check_bytes=True):
                continue
        if notes is not None:
            notes.append(f"map order picks the answer: {where}")
        return []
    return diffs


# -- batches ---------------------------------------------------------------------------


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


LIVELOCK = "loops forever here"


def _reports_livelock(outcome: Outcome) -> bool:
    """podnuma reported the distributed picker's endless loop (see
    ``cm/cpumanager/cpu_assignment.py``) somewhere in the run."""
    if outcome.message and LIVELOCK in outcome.message:
        return True
    steps = (outcome.doc or {}).get("steps") or []
    return any(LIVELOCK in (st.get("message") or "") for st in steps if isinstance(st, Mapping))


#: The kubelet merges hints by walking every permutation of one hint per
#: provider and resource (kubernetes#124144): past this many permutations in
#: one merge the oracle may take minutes to hours per pod, so such scenarios
#: go to the slow lane (see :func:`run_both`).
WALK_LIMIT = 2_000_000

#: How long the slow lane waits for one scenario (``PODNUMA_ORACLE_SLOW_TIMEOUT``).
SLOW_TIMEOUT = 20.0


def walk_size(outcome: Outcome) -> int:
    """The largest number of permutations the kubelet's merge walks for one
    container (or pod) of the run, from podnuma's recorded provider hints."""
    largest = 1
    for st in (outcome.doc or {}).get("steps") or []:
        groups: dict[str, int] = {}
        for entry in st.get("providerHints") or []:
            key = str(entry.get("container"))
            groups[key] = groups.get(key, 1) * max(1, len(entry.get("hints") or []))
        largest = max([largest, *groups.values()])
    return largest


def run_both(
    binary: str,
    scenarios: Iterable[tuple[str, Mapping[str, Any]]],
    workdir: Path,
    *,
    bytes_every: int = 0,
    stats: dict[str, int] | None = None,
) -> list[tuple[str, Mapping[str, Any], list[str]]]:
    """Every (name, scenario) through both engines; the mismatches.
    ``bytes_every`` > 0 also compares checkpoint bytes for every n-th one.
    With ``stats`` given, the counts (``run``, ``slow``, ``slow_compared``,
    ``livelock_confirmed``, ``slow_unfinished``, ``compared``,
    ``device_pick``, ``bytes``) are added to it instead of printed.

    No scenario is left out on podnuma's word: where podnuma reports the
    distributed picker's endless loop, or a merge walk over
    :data:`WALK_LIMIT` permutations, the scenario goes to the oracle alone
    with a time limit (the slow lane). When the oracle answers, the two are
    compared like any other (a podnuma endless-loop report the kubelet code
    finishes is a mismatch). When it does not: for an endless loop that is
    what podnuma said (counted as confirmed); for a long walk the scenario
    is counted as unfinished, not compared. A scenario podnuma crashes on
    goes to the slow lane as well (nothing tells how long the kubelet's
    walk is) and is always compared: a crash is never left out."""
    items = list(scenarios)
    paths = []
    for i, (name, doc) in enumerate(items):
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
        paths.append(write_scenario(doc, workdir / f"{i:06d}-{safe}.json"))
    # podnuma first: where it reports the v1.37 picker's livelock, the real
    # kubelet code spins forever, so such a scenario is not sent to the
    # oracle (it would never answer); podnuma's report of it is the match
    mine_all = [run_podnuma(p) for p in paths]
    # (a podnuma crash leaves no provider hints to size the walk by: such a
    # scenario goes to the slow lane too, and is compared whatever happens)
    ask = [
        i for i, m in enumerate(mine_all)
        if m.kind != "crash" and not _reports_livelock(m) and walk_size(m) <= WALK_LIMIT
    ]
    slow = [i for i in range(len(items)) if i not in set(ask)]
    answers = dict(zip(ask, run_oracle(binary, [paths[i] for i in ask]), strict=True))
    limit = float(os.environ.get("PODNUMA_ORACLE_SLOW_TIMEOUT") or SLOW_TIMEOUT)
    confirmed = unfinished = 0
    for i in slow:
        theirs = _alone(binary, paths[i], limit)
        if theirs.kind == "hang" and mine_all[i].kind != "crash":
            if _reports_livelock(mine_all[i]):
                confirmed += 1  # the kubelet code spins, as podnuma said
            else:
                unfinished += 1
            continue
        answers[i] = theirs
    if slow and stats is None:
        print(f"slow lane: {len(slow)} of {len(items)} (podnuma reports the picker's endless loop, crashes, "
              f"or a merge walk over {WALK_LIMIT:,} permutations): {len(slow) - confirmed - unfinished} "
              f"answered and compared, {confirmed} endless loops confirmed (no answer in {limit:.0f} s), "
              f"{unfinished} unfinished in {limit:.0f} s (not compared)")
    notes: list[str] = []
    bytes_checked = 0
    pods_refused = 0
    out = []
    for i, ((name, doc), path, mine) in enumerate(zip(items, paths, mine_all, strict=True)):
        if i not in answers:
            continue
        t = answers[i]
        check_bytes = bytes_every > 0 and i % bytes_every == 0 and mine.kind == "ok" and t.kind == "ok"
        if check_bytes:
            t = run_oracle_checkpoints(binary, path)
            bytes_checked += 1
        diffs = compare_resampled(binary, path, mine, t, doc, check_bytes=check_bytes, notes=notes)
        if not diffs and mine.kind == "input" and t.kind == "input":
            diffs = pod_refusal_diffs(binary, mine, t, doc)
            if pod_refusal(mine.message) is not None:
                pods_refused += 1
        if diffs:
            out.append((name, doc, diffs))
    if stats is not None:
        picks = sum(1 for n in notes if n.startswith("random device pick"))
        fit_order = sum(1 for n in notes if n.startswith("scalar resource fit order"))
        panics = sum(1 for n in notes if n == "kubelet panic confirmed")
        for key, value in (("run", len(items)), ("slow", len(slow)),
                           ("slow_compared", len(slow) - confirmed - unfinished),
                           ("livelock_confirmed", confirmed), ("slow_unfinished", unfinished),
                           ("compared", len(answers)),
                           ("device_pick", picks), ("map_order_start", len(notes) - picks - fit_order - panics),
                           ("fit_order", fit_order), ("kubelet_panic", panics),
                           ("bytes", bytes_checked), ("pod_refused", pods_refused)):
            stats[key] = stats.get(key, 0) + value
    if stats is None and pods_refused:
        print(f"refused by both engines for a step's pod (podnuma's error among the API server's): "
              f"{pods_refused} of {len(answers)}")
    if stats is None and notes:
        print(f"compared only in part (a random device pick, a restored memory checkpoint the "
              f"kubelet accepts or refuses by Go map order, which missing resource the fit names, "
              f"or a kubelet panic podnuma names): {len(notes)} of {len(answers)}; see docs/oracle.md")
    return out


def random_settings() -> tuple[int, int]:
    """(seed, count) of the random part: ``PODNUMA_ORACLE_SEED`` (default:
    today's date, UTC, as YYYYMMDD, so every run of a day agrees across
    test workers) and ``PODNUMA_ORACLE_COUNT`` (default 1,000)."""
    import datetime

    day = int(datetime.datetime.now(datetime.UTC).strftime("%Y%m%d"))
    return env_int("PODNUMA_ORACLE_SEED", day), env_int("PODNUMA_ORACLE_COUNT", 1000)


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default

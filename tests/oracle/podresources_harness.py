"""Differential harness for the PodResources API: podnuma's server
(:mod:`podnuma.grpc.server` over a node replaying the scenario) against the
kubelet's own (``kubelet-oracle podresources``: pkg/kubelet/server
ListenAndServePodResources, v1 and v1alpha1, over the oracle's managers),
both on unix sockets, both asked with podnuma's gRPC client after every
step: v1 ``List``, ``Get`` of every pod the node knows and of one it does
not, ``GetAllocatableResources``, and the legacy v1alpha1 ``List``.

Messages are compared as protobuf messages after a canonical sort of what
upstream leaves unordered, and nothing else:

- the pods of ``List`` (v1 and v1alpha1): the kubelet's pod manager hands
  them out of a Go map; sorted by namespace and name;
- ``cpu_ids`` (pod, container, allocatable): ``cpuset.UnsortedList``; sorted;
- devices: built by ranging over Go maps (resource, then device id); sorted
  by resource, ids and NUMA node;
- memory blocks: the memory manager keeps them in an order that follows
  Go map iteration; sorted by type, size and NUMA nodes (a block's own NUMA
  list is kept as is).

Container order within a pod (sidecars, then app containers, in spec
order) is upstream's and compared as given. Which device ids a container
holds is the device manager's random pick among equivalent devices: a
container's devices are compared by resource and NUMA node per device, and
a run is compared up to the step where the two engines part by such a pick
(:func:`tests.oracle.harness.compare`). Allocatable devices keep their ids.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

import grpc
from tests.oracle.cgroups_harness import DEVICE_RETRIES, _podnuma_run
from tests.oracle.harness import (
    WALK_LIMIT,
    Outcome,
    _reports_livelock,
    compare,
    device_numa,
    run_oracle,
    walk_size,
)

__all__ = ["podresources_differences", "canonical", "Answers"]

#: A pod no scenario has: ``Get`` must fail alike.
MISSING = ("no-such-namespace", "no-such-pod")

Answers = dict[str, Any]


def _sorted_msgs(msgs: Sequence[Message], key: Callable[[Message], Any]) -> list[Message]:
    return sorted(msgs, key=key)


def _device_key(d: Any) -> tuple[Any, ...]:
    return (d.resource_name, list(d.device_ids), [n.ID for n in d.topology.nodes])


def _memory_key(m: Any) -> tuple[Any, ...]:
    return (m.memory_type, m.size, [n.ID for n in m.topology.nodes])


def _canonical_container(c: Any, *, keep_device_ids: bool) -> None:
    c.cpu_ids[:] = sorted(c.cpu_ids)
    if not keep_device_ids:
        for d in c.devices:
            del d.device_ids[:]
    devices = [type(d)() for d in c.devices]
    for new, old in zip(devices, _sorted_msgs(list(c.devices), _device_key), strict=True):
        new.CopyFrom(old)
    del c.devices[:]
    c.devices.extend(devices)
    memory = [type(m)() for m in c.memory]
    for new, old in zip(memory, _sorted_msgs(list(c.memory), _memory_key), strict=True):
        new.CopyFrom(old)
    del c.memory[:]
    c.memory.extend(memory)


def _canonical_pod(p: Any) -> None:
    p.cpu_ids[:] = sorted(p.cpu_ids)
    memory = [type(m)() for m in p.memory]
    for new, old in zip(memory, _sorted_msgs(list(p.memory), _memory_key), strict=True):
        new.CopyFrom(old)
    del p.memory[:]
    p.memory.extend(memory)
    for c in p.containers:
        _canonical_container(c, keep_device_ids=True)


def canonical(msg: Message) -> Message:
    """A copy of a PodResources response in canonical order (see above)."""
    out = type(msg)()
    out.CopyFrom(msg)
    name = type(out).DESCRIPTOR.full_name
    if name.endswith("ListPodResourcesResponse"):
        pods = list(out.pod_resources)  # type: ignore[attr-defined]
        for p in pods:
            if name.startswith("v1."):
                _canonical_pod(p)
            else:  # v1alpha1: devices only
                for c in p.containers:
                    devs = sorted(c.devices, key=lambda d: (d.resource_name, list(d.device_ids)))
                    copies = [type(d)() for d in devs]
                    for new, old in zip(copies, devs, strict=True):
                        new.CopyFrom(old)
                    del c.devices[:]
                    c.devices.extend(copies)
        ordered = [type(p)() for p in pods]
        for new, old in zip(ordered, sorted(pods, key=lambda p: (p.namespace, p.name)), strict=True):
            new.CopyFrom(old)
        del out.pod_resources[:]  # type: ignore[attr-defined]
        out.pod_resources.extend(ordered)  # type: ignore[attr-defined]
    elif name.endswith("GetPodResourcesResponse"):
        _canonical_pod(out.pod_resources)  # type: ignore[attr-defined]
    elif name.endswith("AllocatableResourcesResponse"):
        fake = out  # same fields as a container: cpu_ids, devices, memory
        _canonical_container(fake, keep_device_ids=True)
    return out


def _call(fn: Callable[[], Any]) -> Any:
    """One call, waiting out the kubelet's rate limit (100 per second,
    burst 10) when a replay asks faster."""
    import time

    for _ in range(100):
        try:
            return fn()
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            time.sleep(0.05)
    return fn()


def ask(sock: Path, pods: Sequence[tuple[str, str]]) -> Answers:
    """Every question over the socket, with podnuma's client."""
    from podnuma.grpc import client
    from podnuma.grpc.podresources.v1alpha1 import api_pb2 as alpha_pb
    from podnuma.grpc.podresources.v1alpha1 import api_pb2_grpc as alpha_grpc

    out: Answers = {}
    with client.connect(sock) as stub:
        out["list"] = canonical(_call(lambda: client.list_pods(stub)))
        out["allocatable"] = canonical(_call(lambda: client.allocatable(stub)))
        for ns, name in [*sorted(set(pods)), MISSING]:
            try:
                out[f"get {ns}/{name}"] = canonical(_call(lambda ns=ns, name=name: client.get_pod(stub, ns, name)))
            except grpc.RpcError as e:
                out[f"get {ns}/{name}"] = (e.code().name, e.details())
    with grpc.insecure_channel(f"unix:{sock}") as channel:
        legacy_stub = alpha_grpc.PodResourcesListerStub(channel)
        legacy = _call(lambda: legacy_stub.List(alpha_pb.ListPodResourcesRequest(), timeout=10))
    out["v1alpha1 list"] = canonical(legacy)
    return out


def _strip_devices(msg: Any, *, ids: bool) -> Any:
    """A copy without the devices' NUMA topology (and ids with ``ids``)."""
    if not isinstance(msg, Message):
        return msg
    out = type(msg)()
    out.CopyFrom(msg)

    def walk(m: Message) -> None:
        for fd, value in m.ListFields():
            repeated = not isinstance(value, Message)
            if fd.name == "devices" and repeated:
                for d in value:
                    if d.DESCRIPTOR.fields_by_name.get("topology") is not None:
                        d.ClearField("topology")
                    if ids:
                        del d.device_ids[:]
            elif fd.message_type is not None:
                for sub in value if repeated else [value]:
                    walk(sub)

    walk(out)
    return out


def _show(x: Any) -> str:
    if isinstance(x, Message):
        from google.protobuf import json_format

        return json.dumps(json_format.MessageToDict(x), sort_keys=True)[:600]
    return repr(x)[:600]


def compare_answers(mine: Answers, theirs: Answers, notes: list[str] | None = None) -> list[str]:
    """Protobuf equality of the canonical answers. Where the two engines'
    device managers took different device ids (a random pick), the
    answers are compared without device ids and topology; with the same ids
    the topology must agree too."""
    diffs = []
    for key in sorted(set(mine) | set(theirs)):
        a, b = mine.get(key), theirs.get(key)
        if a == b:
            continue
        if _strip_devices(a, ids=False) != _strip_devices(b, ids=False) and _strip_devices(
            a, ids=True
        ) == _strip_devices(b, ids=True):
            if notes is not None:
                notes.append(f"{key}: other device ids (a random pick)")
            continue
        diffs.append(f"{key}: podnuma {_show(a)} != oracle {_show(b)}")
    return diffs


class _Oracle:
    """``kubelet-oracle podresources`` driven step by step over stdin."""

    def __init__(self, binary: str, scenario: Path, sock: Path) -> None:
        self.proc = subprocess.Popen(
            [binary, "podresources", str(scenario), "--socket", str(sock)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.line = self._read()

    def _read(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise RuntimeError(f"kubelet-oracle podresources ended: {err.strip()[-500:]}")
        return line

    def next(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write("next\n")
        self.proc.stdin.flush()
        self.line = self._read()
        return self.line

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def replay(
    binary: str, path: Path, upto: int, on_step: Callable[[int, Answers, Answers], None]
) -> None:
    """Replay the scenario on podnuma's node and the oracle together; after
    each step 0..upto, ``on_step(step, podnuma answers, oracle answers)``."""
    from podnuma.grpc.provider import NodeProvider
    from podnuma.grpc.ratelimit import TokenBucket
    from podnuma.grpc.server import serve_unix
    from podnuma.inputs.scenario import load_scenario
    from podnuma.scenario.run import start_node

    scenario = load_scenario(path)
    node = start_node(scenario)
    # the pod manager knows the pods running before the first step
    known: list[Any] = list(scenario.running_pods)
    with tempfile.TemporaryDirectory(prefix="pr-", dir="/tmp") as d:
        mine_sock, their_sock = Path(d) / "podnuma.sock", Path(d) / "kubelet.sock"
        # no rate limit in the way of the questions (the kubelet's: 100 QPS,
        # burst 10, is the oracle's; answers are what is compared)
        server = serve_unix(mine_sock, NodeProvider(lambda: node, lambda: known), bucket=TokenBucket(qps=1e9, burst=10**6))
        oracle = _Oracle(binary, path, their_sock)
        try:
            for step in scenario.steps[: upto + 1]:
                if step.op == "addPod":
                    assert step.pod is not None
                    known[:] = [p for p in known if p.uid != step.pod.uid] + [step.pod]
                    node.add_pod(step.pod, step.index)
                elif step.op == "removePod":
                    assert step.ref is not None
                    gone = node.remove_pod(step.ref, step.index).pod_uid
                    known[:] = [p for p in known if p.uid != gone]
                else:
                    assert step.ref is not None and step.container is not None
                    node.remove_container(step.ref, step.container, step.index)
                line = oracle.next()
                if line != f"ready {step.index}":
                    raise RuntimeError(f"kubelet-oracle at step {step.index}: {line}")
                names = [(p.namespace, p.name) for p in known]
                on_step(step.index, ask(mine_sock, names), ask(their_sock, names))
        finally:
            oracle.close()
            server.stop(None)


def podresources_differences(
    binary: str, items: Sequence[tuple[str, Mapping[str, Any], Path]], stats: dict[str, int]
) -> list[tuple[str, list[str]]]:
    """Every (name, scenario, path) replayed on both servers; the scenarios
    whose answers differ at some step (the first such step is reported).
    ``stats``: ``scenarios``, ``replayed``, ``steps`` (steps compared),
    ``questions`` (answers compared), ``failed_alike``, ``not_sent``,
    ``engines_differ``, ``device_pick``."""
    runs = [_podnuma_run(path)[2] for _, _, path in items]
    ask_idx = [i for i, o in enumerate(runs) if not _reports_livelock(o) and walk_size(o) <= WALK_LIMIT]
    stats["scenarios"] = stats.get("scenarios", 0) + len(items)
    stats["not_sent"] = stats.get("not_sent", 0) + len(items) - len(ask_idx)
    sims = dict(zip(ask_idx, run_oracle(binary, [items[i][2] for i in ask_idx]), strict=True))
    out: list[tuple[str, list[str]]] = []
    for i in ask_idx:
        name, doc, path = items[i]
        mine: Outcome = runs[i]
        notes: list[str] = []
        if compare(mine, sims[i], doc, notes=notes):
            stats["engines_differ"] = stats.get("engines_differ", 0) + 1
            continue
        if mine.kind != "ok" or sims[i].kind != "ok" or not (mine.doc or {}).get("steps"):
            stats["failed_alike"] = stats.get("failed_alike", 0) + 1
            continue
        upto = len(mine.doc["steps"]) - 1  # type: ignore[index]
        for note in notes:
            if note.startswith("random device pick at step "):
                upto = int(note.split()[5].rstrip(":"))
                stats["device_pick"] = stats.get("device_pick", 0) + 1
        found: list[str] = []
        picks: list[str] = []

        def on_step(
            step: int, a: Answers, b: Answers, found: list[str] = found, picks: list[str] = picks
        ) -> None:
            stats["steps"] = stats.get("steps", 0) + 1
            stats["questions"] = stats.get("questions", 0) + len(b)
            if not found:
                diffs = compare_answers(a, b, picks)
                if diffs:
                    found.extend([f"after step {step}:", *diffs])

        replay(binary, path, upto, on_step)
        # The device manager's random picks in this run of the kubelet's
        # code may part from podnuma's before the step the simulate
        # documents say (another run): podnuma's answers stand when some
        # run of the kubelet gives them.
        tries = DEVICE_RETRIES if device_numa(doc) else 0
        counted = (stats.get("steps", 0), stats.get("questions", 0))
        while found and tries:
            tries -= 1
            found.clear()
            replay(binary, path, upto, on_step)
            if not found:
                stats["device_retry"] = stats.get("device_retry", 0) + 1
        stats["steps"], stats["questions"] = counted  # the first replay's
        stats["replayed"] = stats.get("replayed", 0) + 1
        if picks:
            stats["other_device_ids"] = stats.get("other_device_ids", 0) + 1
        if found:
            out.append((name, found))
    return out

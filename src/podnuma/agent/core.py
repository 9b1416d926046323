"""The agent's reconciliation: manifests in, admission decisions out.

Each :meth:`Agent.sync` reads the whole manifest directory (as the kubelet's
file source re-lists it on every change) and brings the node in line:

1. malformed files are reported (file, field path, message) and skipped --
   as the kubelet does, a pod whose file became malformed is gone from the
   source, so it is removed; a second file with an already-used pod name is
   skipped (``duplicate pod name``);
2. pods whose file disappeared or changed are removed (a changed pod is a
   new pod: new content, new UID), each removal written to the checkpoints;
3. on the first sync after a start, checkpoint entries of pods no manifest
   names any more are removed (the kubelet's ``removeStaleState`` at the
   first admission does the same); pods whose manifests are still there are
   re-admitted with the same UID, so the managers keep their assignments;
4. new pods are admitted in file order, each decision logged, counted,
   applied to cgroups and written to the checkpoints (temp file, fsync,
   rename, directory fsync);
5. the CPU manager drops state of pods no longer active, as its reconcile
   loop does; the status file is rewritten.

A lock guards the node: the PodResources server reads under it. The
manifests are read before it is taken (a slow or large file keeps no
PodResources answer waiting); every file's bytes are read at every sync,
as the kubelet reads them, and parsed again only when they changed (their
hash: a large refused manifest is not parsed at every resync). Running out
of file descriptors raises ``OSError`` out of :meth:`Agent.sync`: while
the manifests are read, before anything changed (no pod is removed for a
file it could not open); while a checkpoint is written, where the sync
stopped (the next one writes what is left). The agent's loop tries again
later.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from podnuma.agent.cgroups import CgroupApplier, NoCgroups
from podnuma.agent.logs import kv
from podnuma.agent.manifests import (
    Manifest,
    ManifestsUnreachable,
    list_manifests,
    parse_manifest,
    read_manifest_bytes,
)
from podnuma.agent.metrics import AgentMetrics
from podnuma.agent.state import StateDir
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import Pod
from podnuma.cgroups import PlannedPod
from podnuma.cm.container_manager import Node
from podnuma.errors import InputError
from podnuma.grpc.provider import NodeProvider
from podnuma.inputs.state import checkpoint_pod_uids
from podnuma.machine.topology import Machine
from podnuma.render.serialize import dump_json

__all__ = ["Agent", "PodRecord", "STATUS_KIND"]

STATUS_KIND = "AgentStatus"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class PodRecord:
    """A static pod the agent decided on."""

    file: str
    digest: str
    pod: Pod
    admitted: bool
    reason: str | None
    message: str | None
    decided: str
    qos_class: str = "BestEffort"


def _canonical_file(path: Path, resolved: dict[Path, Path]) -> Path:
    """``path`` in its directory's canonical spelling (links and ``..``
    resolved), its own name kept; ``resolved``: the directories resolved
    so far."""
    parent = resolved.get(path.parent)
    if parent is None:
        parent = resolved[path.parent] = Path(os.path.realpath(path.parent))
    return parent / path.name


class Agent:
    def __init__(
        self,
        *,
        machine: Machine,
        config: KubeletConfig,
        manifests: Path,
        state: StateDir,
        logger: logging.Logger,
        metrics: AgentMetrics | None = None,
        cgroups: CgroupApplier | None = None,
    ) -> None:
        # the static-pod path as given is listed (its name is part of the
        # kubelet's glob pattern); the files are named in the canonical
        # directory: file names, and so the UIDs hashed from them, are the
        # same however the directory was spelled
        self._source = manifests
        self.manifests = Path(os.path.realpath(manifests))
        self.state = state
        self.log = logger
        self.metrics = metrics
        self.cgroups: CgroupApplier = cgroups if cgroups is not None else NoCgroups()
        self._cgroups_left: list[str] = []  # what the last cgroup sync could not remove (logged)
        restored = state.restore(config)
        self.stale_temp_files = restored.stale_temp_files
        self.node = Node(
            machine,
            config,
            cpu_checkpoint=restored.cpu,
            memory_checkpoint=restored.memory,
            device_checkpoint=restored.device,
        )
        self._restored_uids = checkpoint_pod_uids(restored.cpu, restored.memory)
        self._restore_pending = True
        self.lock = threading.RLock()
        # one reconciliation at a time; the manifests are read outside
        # ``lock`` (the PodResources answers wait for ``lock`` only while
        # the node changes), each parsed again only when its bytes changed
        self._sync_lock = threading.Lock()
        self._read_cache: dict[str, tuple[bytes, Manifest | InputError]] = {}
        self.records: dict[str, PodRecord] = {}
        self.errors: dict[str, str] = {}
        self._skip_reasons: dict[str, str] = {}  # file -> invalid | duplicate
        self._unreachable: str | None = None  # why the manifests could not be looked at, last sync
        self._missing = False  # the static-pod path did not exist, last sync
        self._step = 0
        self._removed: list[PlannedPod] = []
        self.syncs = 0
        self.started = _now()
        self.stopped: str | None = None
        self.log.info(
            "Agent started",
            extra=kv(
                node=machine.name,
                manifests=str(self.manifests),
                stateDir=str(state.path),
                restoredPods=len(self._restored_uids),
                staleTempFilesRemoved=self.stale_temp_files,
            ),
        )
        if restored.device is not None and restored.device.error is not None:
            # (the kubelet's device manager: "Continue after failing to read
            # checkpoint file. Device allocation info may NOT be up-to-date")
            self.log.warning("Device checkpoint not read; starting without its device state",
                             extra=kv(error=restored.device.error))

    # -- the PodResources view -------------------------------------------------
    def provider(self) -> NodeProvider:
        return NodeProvider(
            lambda: self.node, lambda: [r.pod for r in self.records.values()], self.lock
        )

    # -- reconciliation ---------------------------------------------------------
    def sync(self) -> None:
        with self._sync_lock:
            try:
                desired, errors, reasons = self._read_desired()
            except ManifestsUnreachable as e:
                # the kubelet logs it and sends no update: the pods stay
                if self._unreachable != str(e):
                    self._unreachable = str(e)
                    self.log.warning("Manifests not read, pods kept", extra=kv(error=str(e)))
                return
            self._unreachable = None
            with self.lock:
                self._skip_reasons = reasons
                self._sync(desired, errors)

    def _read(self, path: Path) -> Manifest | InputError:
        """The manifest at ``path``, or why it is refused. Its bytes are read
        every time (bounded), as the kubelet reads the file every time: no
        metadata (size, times) is trusted to tell a change, which a write
        through a shared mapping may not make. The parse is kept by the
        content's hash: unchanged bytes are not parsed again (a large
        refused manifest is not parsed at every resync). Running out of
        file descriptors raises (``OSError``): the whole sync is tried
        again later, nothing removed."""
        name = str(path)
        try:
            raw = read_manifest_bytes(path)
        except InputError as e:
            self._read_cache.pop(name, None)
            return e
        key = hashlib.blake2b(raw, digest_size=32).digest()
        cached = self._read_cache.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        got: Manifest | InputError
        try:
            got = parse_manifest(raw, path, node_name=self.node.machine.name, gates=self.node.gates)
        except InputError as e:
            got = e
        self._read_cache[name] = (key, got)
        return got

    def _read_desired(self) -> tuple[dict[str, Manifest], dict[str, str], dict[str, str]]:
        desired: dict[str, Manifest] = {}
        errors: dict[str, str] = {}
        reasons: dict[str, str] = {}
        owner: dict[str, str] = {}
        uid_owner: dict[str, str] = {}
        listing = list_manifests(self._source)
        if listing.missing != self._missing:
            self._missing = listing.missing
            if listing.missing:
                self.log.warning("Static pod path does not exist, ignoring", extra=kv(manifests=str(self._source)))
        resolved: dict[Path, Path] = {}  # (a directory resolved once a sync)
        listed = [_canonical_file(p, resolved) for p in listing.files]
        for gone in set(self._read_cache) - {str(p) for p in listed}:
            del self._read_cache[gone]
        for path in listed:
            m = self._read(path)
            if isinstance(m, InputError) and listing.single:
                # one file: the kubelet's source logs the refusal and sends
                # no update, so its pod stays as it was
                raise ManifestsUnreachable(str(m))
            if isinstance(m, InputError):
                errors[str(path)] = str(m)
                reasons[str(path)] = "invalid"
                continue
            # A pod's name, then its UID, taken by an earlier file: this one
            # left out and said. Two pods with one UID (only a metadata.uid
            # written in both can give that): the kubelet's pod storage keys
            # pods by UID and takes both as additions, the later in its map;
            # the managers here keep a pod's CPUs and memory by its UID
            taken = next(((field, what, value, owners[key]) for field, what, value, key, owners in (
                ("metadata.name", "name", m.pod.name, m.pod.ref, owner),
                ("metadata.uid", "UID", m.pod.uid, m.pod.uid, uid_owner),
            ) if key in owners), None)
            if taken is not None:
                field, what, value, first = taken
                errors[m.file] = f"{m.file}: {field}: duplicate pod {what} {value!r} (the pod of {first}), ignoring"
                reasons[m.file] = "duplicate"
                continue
            owner[m.pod.ref] = m.file
            uid_owner[m.pod.uid] = m.file
            desired[m.file] = m
        return desired, errors, reasons

    def _sync(self, desired: dict[str, Manifest], errors: dict[str, str]) -> None:
        self.syncs += 1
        for file, text in errors.items():
            if self.errors.get(file) != text:
                reason = self._skip_reasons.get(file, "invalid")
                self.log.warning("Manifest skipped", extra=kv(file=file, reason=reason, error=text))
                if self.metrics is not None:
                    self.metrics.manifests_skipped.labels(reason).inc()
        self.errors = errors

        for file, rec in list(self.records.items()):
            m = desired.get(file)
            if m is None:
                self._remove(rec, "manifest removed" if file not in errors else "manifest invalid")
            elif m.digest != rec.digest or m.pod.uid != rec.pod.uid:
                self._remove(rec, "manifest changed")

        if self._restore_pending:
            self._restore_pending = False
            wanted = {m.pod.uid for m in desired.values()}
            for uid in sorted(self._restored_uids - wanted):
                self._step += 1
                self.node.remove_pod(uid, self._step)
                self.log.info("Stale pod state removed", extra=kv(uid=uid, reason="no manifest"))
                self._checkpoint()

        for file in sorted(desired):
            if file not in self.records:
                self._admit(desired[file])

        # The CPU manager's reconcile loop drops what inactive pods hold.
        self.node.cpu.remove_stale_state()
        self._checkpoint()
        self._apply_cgroups()
        self.write_status()
        if self.metrics is not None:
            self.metrics.observe_node(self.node)
            admitted = sum(r.admitted for r in self.records.values())
            self.metrics.pods.labels("admitted").set(admitted)
            self.metrics.pods.labels("rejected").set(len(self.records) - admitted)
            self.metrics.manifest_errors.set(len(self.errors))

    def _admit(self, m: Manifest) -> None:
        self._step += 1
        started = time.perf_counter()
        result = self.node.add_pod(m.pod, self._step)
        elapsed = time.perf_counter() - started
        admitted = bool(result.admitted)
        rec = PodRecord(
            file=m.file,
            digest=m.digest,
            pod=m.pod,
            admitted=admitted,
            reason=result.reason,
            message=result.message,
            decided=_now(),
            qos_class=result.qos_class or "BestEffort",
        )
        self.records[m.file] = rec
        if self.metrics is not None:
            self.metrics.admissions.labels(
                "admitted" if admitted else "rejected", result.reason or ""
            ).inc()
            self.metrics.admission_seconds.observe(elapsed)
        fields = kv(
            file=m.file,
            pod=m.pod.ref,
            uid=m.pod.uid,
            result="admitted" if admitted else "rejected",
            reason=result.reason or "",
            message=result.message or "",
            restored=m.pod.uid in self._restored_uids or None,
        )
        if admitted:
            self.log.info("Pod admitted", extra=fields)
        else:
            self.log.warning("Pod rejected", extra=fields)
        self._checkpoint()

    def _remove(self, rec: PodRecord, why: str) -> None:
        del self.records[rec.file]
        if rec.admitted:
            self._step += 1
            planned = PlannedPod(rec.pod, rec.qos_class, self.node.container_results(rec.pod.uid))
            self.node.remove_pod(rec.pod.uid, self._step)
            self._removed.append(planned)
            self._checkpoint()
        self.log.info(
            "Pod removed", extra=kv(file=rec.file, pod=rec.pod.ref, uid=rec.pod.uid, reason=why)
        )

    def _apply_cgroups(self) -> None:
        removed, self._removed = self._removed, []
        running = {
            rec.pod.uid: PlannedPod(rec.pod, rec.qos_class, self.node.container_results(rec.pod.uid))
            for rec in self.records.values()
            if rec.admitted
        }
        try:
            left = self.cgroups.sync(self.node, running, removed)
        except InputError as e:
            self.log.error("Cgroup apply failed", extra=kv(error=str(e)))
            return
        if left != self._cgroups_left:  # (logged when it changes, not at every resync)
            self._cgroups_left = left
            if left:
                self.log.warning(
                    "Cgroups not removed", extra=kv(count=len(left), cgroups=" ".join(left[:10]))
                )

    def _checkpoint(self) -> None:
        self.state.write(self.node.checkpoint_files())

    # -- status -------------------------------------------------------------------
    def status_doc(self) -> dict[str, Any]:
        with self.lock:
            listed = {(p.namespace, p.name): p for p in self.node.pod_resources()}
            pods: list[dict[str, Any]] = []
            for rec in sorted(self.records.values(), key=lambda r: r.file):
                entry: dict[str, Any] = {
                    "file": rec.file,
                    "namespace": rec.pod.namespace,
                    "name": rec.pod.name,
                    "uid": rec.pod.uid,
                    "digest": rec.digest,
                    "admitted": rec.admitted,
                    "decided": rec.decided,
                }
                if not rec.admitted:
                    entry["reason"] = rec.reason
                    entry["message"] = rec.message
                pr = listed.get((rec.pod.namespace, rec.pod.name))
                if pr is not None:
                    entry["podResources"] = pr.to_json()
                pods.append(entry)
            return {
                "apiVersion": "podnuma.io/v1",
                "kind": STATUS_KIND,
                "node": self.node.machine.name,
                "pid": os.getpid(),
                "manifests": str(self.manifests),
                "started": self.started,
                "updated": _now(),
                "stopped": self.stopped,
                "syncs": self.syncs,
                "defaultCpuSet": str(self.node.cpu.state.get_default_cpuset()),
                "pods": pods,
                "skipped": [{"file": f, "error": e} for f, e in sorted(self.errors.items())],
            }

    def write_status(self) -> None:
        self.state.write_status(
            dump_json(self.status_doc()).encode("utf-8")
        )

"""Crash test: ``podnuma agent`` (a real subprocess) is killed with SIGKILL
at random points while manifest changes are applied; after every restart
its state must be whole and right.

Seeded (``PODNUMA_CRASH_SEED``, default 5526); ``PODNUMA_CRASH_CHANGES``
manifest changes (default 1000: creations, edits, deletions, now and then a
malformed file) on six pod slots, each change followed by a short random
pause; after a change the agent is killed with probability 1/50 (at a
random moment: while it reads, admits, writes checkpoints or its status),
and one kill in five hits the restarted agent again before it settles.
After each restart, once the agent has caught up with the directory:

* both checkpoint files decode, checksums valid (corrupt files: 0);
* no CPU is in the exclusive sets of two pods, none is also in the
  default set;
* the CPU checkpoint holds exactly the admitted pods;
* every pod that outlived the crash (same manifest, same UID) kept exactly
  the CPUs it had in the checkpoint found on disk at the kill;
* the state equals a fresh replay of the manifests present: the same pods
  admitted, each with the same exclusive CPU counts per container and pod
  and the same memory per container and pod (a fresh replay need not pick
  the same CPU ids: those depend on the order pods came and went).

Pods are classic ones (Guaranteed with exclusive CPUs and pinned memory,
Burstable, BestEffort): kubelet v1.37.2 does not re-admit a pod with
pod-level resources after a restart (test_agent.py pins that), so such pods
cannot outlive a crash.
The workload never over-commits a NUMA node (at most six pods of at most
4 CPUs and 2Gi), so admission does not depend on history. The figures are
printed at the end -- kills, recoveries, corrupt files, pods kept, temporary
files that kills left mid-write (removed at the next start) -- and written as JSON to ``PODNUMA_CRASH_REPORT`` if set).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from podnuma.agent.manifests import list_manifest_files, read_manifest
from podnuma.cm.checkpoint import CheckpointError
from podnuma.cm.container_manager import Node
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, decode_cpu_checkpoint
from podnuma.cm.memorymanager.checkpoint import MemoryCheckpointData, decode_memory_checkpoint
from podnuma.inputs.pods import load_config_file, load_node_file
from podnuma.machine.cpuset import CPUSet
from tests.agent.helpers import AgentProcess, write_manifest

SLOTS = 6
# Slots 0 and 1 change rarely, so pods outlive kills and restarts.
SLOT_WEIGHTS = [0.01, 0.01, 1.0, 1.0, 1.0, 1.0]
KILL_PROBABILITY = 1 / 50
SECOND_KILL_PROBABILITY = 1 / 5


def make_pod(slot: int, rng: random.Random, rev: int) -> dict[str, Any]:
    meta = {"name": f"pod-{slot}", "namespace": "crash", "labels": {"rev": str(rev)}}
    # The two rarely changed slots hold Guaranteed pods: CPUs to keep.
    kind = "guaranteed" if slot < 2 else rng.choice(["guaranteed", "burstable", "best-effort"])
    if kind == "guaranteed":
        cpu = rng.choice(["1", "2"])
        mem = rng.choice(["512Mi", "1Gi"])
        res = {"requests": {"cpu": cpu, "memory": mem}, "limits": {"cpu": cpu, "memory": mem}}
        spec: dict[str, Any] = {"containers": [{"name": "main", "image": "x", "resources": res}]}
    elif kind == "burstable":
        spec = {"containers": [{"name": "main", "image": "x", "resources": {"requests": {"cpu": "500m"}}}]}
    else:
        spec = {"containers": [{"name": "main", "image": "x"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def malformed(slot: int) -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: pod-{slot}, namespace: crash}}\n"
        "spec:\n  containers:\n    - name: main\n      resources: {limits: {cpu: plenty}}\n"
    )


class Figures:
    def __init__(self) -> None:
        self.changes = 0
        self.kills = 0
        self.kills_during_restart = 0
        self.recoveries = 0
        self.corrupt_files = 0
        self.checkpoints_checked = 0
        self.pods_kept = 0
        self.pods_moved = 0
        self.malformed_written = 0
        self.max_pods = 0
        self.temp_files_left_by_kills = 0


def read_checkpoints(state: Path, figures: Figures) -> tuple[CPUCheckpointData | None, MemoryCheckpointData | None]:
    cpu = mem = None
    for name in ("cpu_manager_state", "memory_manager_state"):
        try:
            blob = (state / name).read_bytes()
        except FileNotFoundError:
            continue
        figures.checkpoints_checked += 1
        try:
            if name == "cpu_manager_state":
                cpu = decode_cpu_checkpoint(blob)
            else:
                mem = decode_memory_checkpoint(blob, pod_level_resource_managers=True)
        except CheckpointError as e:
            figures.corrupt_files += 1
            raise AssertionError(f"{name} does not load: {e}") from None
    return cpu, mem


def cpu_shape(cpu: CPUCheckpointData, uid: str) -> tuple[Any, ...]:
    containers = tuple(sorted((n, s.size()) for n, s in cpu.entries.get(uid, {}).items()))
    pod = cpu.pod_entries.get(uid)
    return containers, None if pod is None else pod.size()


def mem_shape(mem: MemoryCheckpointData, uid: str) -> tuple[Any, ...]:
    containers = tuple(
        sorted((n, tuple(sorted((b.type, b.size) for b in blocks))) for n, blocks in mem.entries.get(uid, {}).items())
    )
    pod = tuple(sorted((b.type, b.size) for b in mem.pod_entries.get(uid, [])))
    return containers, pod


def verify(a: AgentProcess, figures: Figures, before_kill: CPUCheckpointData | None) -> None:
    machine = load_node_file(a.base / "node.yaml")
    config = load_config_file(a.base / "kubelet.yaml")
    desired = {}
    for path in list_manifest_files(a.manifests):
        try:
            m = read_manifest(path, node_name=machine.name, gates=config.feature_gates)
        except Exception:
            continue
        desired[m.file] = m
    want = {f: m.digest for f, m in desired.items()}
    st = a.wait(lambda s: {p["file"]: p["digest"] for p in s["pods"]} == want, "the manifests present")
    figures.max_pods = max(figures.max_pods, len(st["pods"]))

    cpu, mem = read_checkpoints(a.state, figures)
    assert cpu is not None and mem is not None
    admitted = {p["uid"] for p in st["pods"] if p["admitted"]}

    # No CPU in two pods' exclusive sets, none also in the default set.
    owner: dict[int, str] = {}
    for uid in set(cpu.entries) | set(cpu.pod_entries):
        cpus = CPUSet()
        for s in cpu.entries.get(uid, {}).values():
            cpus = cpus | s
        if uid in cpu.pod_entries:
            cpus = cpus | cpu.pod_entries[uid]
        for c in cpus.list():
            assert c not in owner, f"CPU {c} held by {owner.get(c)} and {uid}"
            owner[c] = uid
        assert (cpus & cpu.default_cpuset).is_empty(), f"{uid} holds CPUs of the default set"
    assert set(cpu.entries) | set(cpu.pod_entries) <= admitted
    assert {uid for uid in admitted if cpu_shape(cpu, uid) != ((), None)} <= set(cpu.entries) | set(cpu.pod_entries)

    # Pods that outlived the crash kept their CPUs.
    if before_kill is not None:
        for uid, containers in before_kill.entries.items():
            if uid in admitted:
                if cpu.entries.get(uid) == containers and cpu.pod_entries.get(uid) == before_kill.pod_entries.get(uid):
                    figures.pods_kept += 1
                else:
                    figures.pods_moved += 1
                    raise AssertionError(f"pod {uid} moved: {containers} -> {cpu.entries.get(uid)}")

    # A fresh replay of the manifests present.
    fresh = Node(machine, config)
    fresh_admitted = set()
    for i, f in enumerate(sorted(desired)):
        if fresh.add_pod(desired[f].pod, i).admitted:
            fresh_admitted.add(desired[f].pod.uid)
    assert fresh_admitted == admitted
    fcpu = decode_cpu_checkpoint(fresh.checkpoint_files()["cpu_manager_state"])
    fmem = decode_memory_checkpoint(fresh.checkpoint_files()["memory_manager_state"], pod_level_resource_managers=True)
    for uid in admitted:
        assert cpu_shape(cpu, uid) == cpu_shape(fcpu, uid), uid
        assert mem_shape(mem, uid) == mem_shape(fmem, uid), uid


def test_sigkill_at_random_points(record_property: Any) -> None:
    changes = int(os.environ.get("PODNUMA_CRASH_CHANGES", "1000"))
    seed = int(os.environ.get("PODNUMA_CRASH_SEED", "5526"))
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="pnc", dir="/tmp"))
    a = AgentProcess(base)
    figures = Figures()
    started = time.monotonic()
    try:
        a.start()
        a.wait_ready()
        present: dict[int, bool] = {}
        for i in range(changes):
            slot = rng.choices(range(SLOTS), SLOT_WEIGHTS)[0]
            name = f"slot-{slot}.yaml"
            if present.get(slot) and rng.random() < 0.4:
                (a.manifests / name).unlink()
                present[slot] = False
            elif rng.random() < 0.03:
                write_manifest(a.manifests, name, malformed(slot))
                figures.malformed_written += 1
                present[slot] = True
            else:
                write_manifest(a.manifests, name, make_pod(slot, rng, i))
                present[slot] = True
            figures.changes += 1
            time.sleep(rng.uniform(0, 0.004))
            if rng.random() < KILL_PROBABILITY:
                time.sleep(rng.uniform(0, 0.03))
                a.kill()
                figures.kills += 1
                before, _ = read_checkpoints(a.state, figures)
                a.start()
                if rng.random() < SECOND_KILL_PROBABILITY:
                    time.sleep(rng.uniform(0.05, 0.6))
                    a.kill()
                    figures.kills += 1
                    figures.kills_during_restart += 1
                    read_checkpoints(a.state, figures)
                    a.start()
                verify(a, figures, before)
                figures.recoveries += 1
        verify(a, figures, None)
        assert a.signal() == 0
        figures.temp_files_left_by_kills = sum(
            r.get("staleTempFilesRemoved", 0) for r in a.log_records() if r["msg"] == "Agent started"
        )
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        elapsed = time.monotonic() - started
        report = {**vars(figures), "seed": seed, "seconds": round(elapsed, 1)}
        # Printed by tests/conftest.py at the end of the run.
        record_property("crash_figures", ", ".join(f"{k}={v}" for k, v in report.items()))
        out = os.environ.get("PODNUMA_CRASH_REPORT")
        if out:
            Path(out).write_text(json.dumps(report, indent=2) + "\n")
        shutil.rmtree(base, ignore_errors=True)
    assert figures.corrupt_files == 0
    assert figures.pods_moved == 0
    assert figures.kills > 0 and figures.recoveries > 0

"""Crash test: ``podnuma agent`` (a real subprocess, started through the
``podnuma`` command line) is killed with SIGKILL again and again while
manifest changes arrive, many kills landing inside a checkpoint write;
after every restart its state must be whole and right, and the PodResources
``List`` answer (over the real gRPC unix socket) must not have changed for
the pods that outlived the crash.

What one kill cycle does (``PODNUMA_CRASH_KILLS`` cycles, default 1000;
``.ci/run`` sets 60 to keep CI short; seeded by ``PODNUMA_CRASH_SEED``,
default 5526):

1. wait until the agent has caught up with the manifest directory and take
   ``List`` over the socket and the CPU checkpoint on disk;
2. apply a burst of one to three manifest changes (creations, edits,
   deletions on six pod slots, now and then a malformed file; slots 0 and 1
   hold Guaranteed pods and change rarely, so pods outlive many kills);
3. kill the agent with SIGKILL, either (seven cycles in ten, whose burst
   ends with a new Guaranteed pod, so that checkpoints get written) as soon
   as a checkpoint write is under way (a temporary checkpoint file appears;
   the kill follows within 10 ms), or at a random moment up to 50 ms after
   the burst. The agent runs with the fault-injection pause of
   ``podnuma.fileio`` (``PODNUMA_FAULT_WRITE_PAUSE``, 10 ms): every atomic
   write sleeps once with half its bytes in the temporary file and once
   fsynced but not renamed. A kill counts as *during a checkpoint write*
   when, with the process dead, a temporary file of ``cpu_manager_state``
   or ``memory_manager_state`` is in the state directory (counted apart:
   torn, i.e. not decodable, and complete but not renamed);
4. restart it; one restart in five is killed again (half of them as soon
   as it writes a checkpoint, if it does within 300 ms, the others at a
   random moment up to 300 ms) and restarted once more. Restarts fork a
   parent that imported ``podnuma`` once (tests/agent/zygote.py) and run
   ``podnuma.cli.main`` with the agent's arguments, saving the interpreter
   start-up; the last start of the run is a fresh ``python -m podnuma.cli``,
   stopped with SIGTERM (exit code 0);
5. wait until it has caught up, then check:

   * both checkpoint files decode, checksums valid (corrupt files: 0) and
     the temporary files the kills left were removed at start;
   * no CPU is in the exclusive sets of two pods, none is also in the
     default set; the CPU checkpoint holds exactly the admitted pods;
   * every pod that outlived the crash (same manifest, same UID) kept
     exactly the CPUs it had in the checkpoint found on disk at the kill;
   * ``List`` now equals ``List`` before the burst for every pod whose
     manifest the burst did not touch (containers, CPU ids, memory);
   * the state equals a fresh replay of the manifests present: the same
     pods admitted, each with the same exclusive CPU counts per container
     and pod and the same memory per container and pod (a fresh replay need
     not pick the same CPU ids: those depend on the order pods came and
     went).

At least a third of the kills must land during a checkpoint write. The
figures (kills, kills during a checkpoint write, torn temporary files,
recoveries, ``List`` comparisons, pods kept, corrupt files) are printed at
the end of the pytest run and written as JSON to ``PODNUMA_CRASH_REPORT``
if set.

Pods are classic ones (Guaranteed with exclusive CPUs and pinned memory,
Burstable, BestEffort): kubelet v1.37.2 does not re-admit a pod with
pod-level resources after a restart (test_agent.py pins that), so such pods
cannot outlive a crash. The workload never over-commits a NUMA node (at
most six pods of at most 2 CPUs and 1Gi), so admission does not depend on
history.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import grpc
from podnuma.agent.manifests import list_manifest_files, read_manifest
from podnuma.cm.checkpoint import CheckpointError
from podnuma.cm.container_manager import Node
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, decode_cpu_checkpoint
from podnuma.cm.memorymanager.checkpoint import MemoryCheckpointData, decode_memory_checkpoint
from podnuma.grpc import client
from podnuma.grpc.convert import pod_resources_doc
from podnuma.inputs.pods import load_config_file, load_node_file
from podnuma.machine.cpuset import CPUSet
from tests.agent.helpers import DEADLINE, AgentProcess, write_manifest
from tests.agent.zygote import Zygote

SLOTS = 6
# Slots 0 and 1 change rarely, so pods outlive kills and restarts.
SLOT_WEIGHTS = [0.01, 0.01, 1.0, 1.0, 1.0, 1.0]
SECOND_KILL_PROBABILITY = 1 / 5


def make_pod(slot: int, rng: random.Random, rev: int, guaranteed: bool = False) -> dict[str, Any]:
    meta = {"name": f"pod-{slot}", "namespace": "crash", "labels": {"rev": str(rev)}}
    # The two rarely changed slots hold Guaranteed pods: CPUs to keep.
    kind = "guaranteed" if slot < 2 or guaranteed else rng.choice(["guaranteed", "burstable", "best-effort"])
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
        self.kills_during_checkpoint_write = 0
        self.torn_temp_files = 0
        self.complete_temp_files_not_renamed = 0
        self.temp_files_removed_at_start = 0
        self.list_comparisons = 0
        self.list_pods_compared = 0


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


def verify(a: AgentProcess, figures: Figures, before_kill: CPUCheckpointData | None) -> dict[str, Any]:
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
    # (no pod that is not admitted holds CPUs; that each admitted pod holds
    # what it should is the fresh replay's comparison below)
    assert set(cpu.entries) | set(cpu.pod_entries) <= admitted

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
    return st


PAUSE = 0.01  # the agent's fault-injection pause inside each atomic write (s): room for a loaded machine
CHECKPOINTS = ("cpu_manager_state", "memory_manager_state")


def checkpoint_temp_files(state: Path) -> list[Path]:
    return sorted(p for p in state.iterdir() if any(p.name.startswith(f".{n}.") for n in CHECKPOINTS))


def list_pods(a: AgentProcess) -> dict[str, dict[str, Any]]:
    """``List`` over the unix socket (the restarted agent serves it right
    after its first sync: retried while the socket is not up yet)."""
    end = time.monotonic() + DEADLINE
    while True:
        try:
            with client.connect(a.socket) as stub:
                return {p.name: pod_resources_doc(p) for p in client.list_pods(stub).pod_resources}
        except grpc.RpcError as err:
            if err.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > end:
                raise
            time.sleep(0.01)


def kill_during_write(a: AgentProcess, rng: random.Random, figures: Figures, within: float = 1.0) -> None:
    """SIGKILL as soon as a checkpoint write is under way (or, when none
    starts ``within`` seconds, at once); then classify what the kill left."""
    end = time.monotonic() + within
    while time.monotonic() < end and not checkpoint_temp_files(a.state):
        time.sleep(0.0003)
    time.sleep(rng.uniform(0, PAUSE))
    a.kill()
    figures.kills += 1
    classify_kill(a, figures)


def kill_at_random(a: AgentProcess, rng: random.Random, figures: Figures, upto: float) -> None:
    time.sleep(rng.uniform(0, upto))
    a.kill()
    figures.kills += 1
    classify_kill(a, figures)


def classify_kill(a: AgentProcess, figures: Figures) -> None:
    temps = checkpoint_temp_files(a.state)  # the process is dead: nothing moves now
    if not temps:
        return
    figures.kills_during_checkpoint_write += 1
    for t in temps:
        blob = t.read_bytes()
        try:
            if t.name.startswith(".cpu_manager_state."):
                decode_cpu_checkpoint(blob)
            else:
                decode_memory_checkpoint(blob, pod_level_resource_managers=True)
        except CheckpointError:
            figures.torn_temp_files += 1
        else:
            figures.complete_temp_files_not_renamed += 1


def change(
    a: AgentProcess, rng: random.Random, present: dict[int, bool], figures: Figures, i: int, guaranteed: bool
) -> str:
    """One manifest change; ``guaranteed``: a new Guaranteed pod on a busy
    slot (its admission writes both checkpoints)."""
    slot = rng.randrange(2, SLOTS) if guaranteed else rng.choices(range(SLOTS), SLOT_WEIGHTS)[0]
    name = f"slot-{slot}.yaml"
    if guaranteed:
        write_manifest(a.manifests, name, make_pod(slot, rng, i, guaranteed=True))
        present[slot] = True
    elif present.get(slot) and rng.random() < 0.4:
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
    return str(a.manifests / name)


def compare_lists(
    before: dict[str, dict[str, Any]],
    after: dict[str, dict[str, Any]],
    st_before: dict[str, Any],
    st_after: dict[str, Any],
    touched: set[str],
    figures: Figures,
) -> None:
    """Pods whose manifest the burst did not touch: the same answer."""
    digest_before = {p["name"]: (p["file"], p["digest"], p["uid"]) for p in st_before["pods"]}
    digest_after = {p["name"]: (p["file"], p["digest"], p["uid"]) for p in st_after["pods"]}
    for name, doc in before.items():
        d = digest_before.get(name)
        if d is None or d[0] in touched or digest_after.get(name) != d:
            continue
        assert after.get(name) == doc, f"List changed for {name} across the restart: {doc} -> {after.get(name)}"
        figures.list_pods_compared += 1
    figures.list_comparisons += 1


class ForkedAgent(AgentProcess):
    """Started by forking a pre-imported ``podnuma`` (tests/agent/zygote.py)."""

    def __init__(self, base: Path, zygote: Zygote) -> None:
        super().__init__(base)
        self.zygote = zygote

    def start(self) -> None:
        self.starts += 1
        argv = self.argv()
        assert argv[1:3] == ["-m", "podnuma.cli"]
        self.proc = cast(Any, self.zygote.spawn(argv[3:], self.log_path))


def test_sigkill_during_checkpoint_writes(record_property: Any, monkeypatch: Any) -> None:
    kills_wanted = int(os.environ.get("PODNUMA_CRASH_KILLS", "1000"))
    seed = int(os.environ.get("PODNUMA_CRASH_SEED", "5526"))
    monkeypatch.setenv("PODNUMA_FAULT_WRITE_PAUSE", str(PAUSE))  # inherited by the agent only
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="pnc", dir="/tmp"))
    zygote = Zygote(dict(os.environ))
    a = ForkedAgent(base, zygote)
    figures = Figures()
    started = time.monotonic()
    try:
        a.start()
        a.wait_ready()
        present: dict[int, bool] = {}
        i = 0
        while figures.kills < kills_wanted:
            st_before = verify(a, figures, None)
            before_list = list_pods(a)
            before_cpu, _ = read_checkpoints(a.state, figures)
            in_write = rng.random() < 0.7
            n = rng.randint(1, 3)
            touched = {change(a, rng, present, figures, i + k, in_write and k == n - 1) for k in range(n)}
            i += 3
            if in_write:
                kill_during_write(a, rng, figures)
            else:
                kill_at_random(a, rng, figures, 0.05)
            at_kill, _ = read_checkpoints(a.state, figures)
            a.start()
            if rng.random() < SECOND_KILL_PROBABILITY:
                figures.kills_during_restart += 1
                if rng.random() < 0.5:
                    kill_during_write(a, rng, figures, within=0.3)
                else:
                    kill_at_random(a, rng, figures, 0.3)
                at_kill, _ = read_checkpoints(a.state, figures)
                a.start()
            st_after = verify(a, figures, at_kill)
            compare_lists(before_list, list_pods(a), st_before, st_after, touched, figures)
            assert not checkpoint_temp_files(a.state), "temporary files left after a restart"
            assert before_cpu is not None
            figures.recoveries += 1
        # The last start is a fresh interpreter (the plain ``podnuma`` command),
        # stopped with SIGTERM: a clean exit.
        st_before = verify(a, figures, None)
        before_list = list_pods(a)
        a.kill()
        figures.kills += 1
        classify_kill(a, figures)
        at_kill, _ = read_checkpoints(a.state, figures)
        AgentProcess.start(a)
        st_after = verify(a, figures, at_kill)
        compare_lists(before_list, list_pods(a), st_before, st_after, set(), figures)
        figures.recoveries += 1
        assert a.signal() == 0
        figures.temp_files_removed_at_start = sum(
            r.get("staleTempFilesRemoved", 0) for r in a.log_records() if r["msg"] == "Agent started"
        )
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        zygote.close()
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
    assert figures.kills >= kills_wanted and figures.recoveries > 0
    assert figures.kills_during_checkpoint_write * 3 >= figures.kills, (
        f"only {figures.kills_during_checkpoint_write} of {figures.kills} kills landed during a checkpoint write"
    )

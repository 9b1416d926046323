"""``podnuma topology`` of a scenario that starts from checkpoints
(``state:``): the pods restored from them hold their CPUs and memory from
the start, as ``podnuma simulate`` runs them.

The scenarios are made the ways a user makes them: ``podnuma state inspect
DIR --as-scenario`` (checkpoints only: restored pods are named by their
UID) and ``podnuma restart --as-scenario`` (``state.pods`` names them, and
one ``addPod`` re-admits each). Every figure of ``topology -o json`` after
each step (and with no step) is checked against ``simulate -o json`` of the
scenario played up to that step: each container's CPUs, the shared pool,
what is held outside it, and the memory pinned per NUMA node.
"""

from __future__ import annotations

import copy
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.inputs.text import TextInput
from podnuma.machine.cpuset import CPUSet
from podnuma.render.picture import HELD, NODE_SHARED, RESERVED
from podnuma.service import scenario as service

ROOT = Path(__file__).resolve().parents[2]
POD_LEVEL_MIXED = ROOT / "examples/pod-level/pod-scope-2-mixed.yaml"
SVG_NS = "{http://www.w3.org/2000/svg}"


def _pod(name: str, containers: dict[str, dict[str, str]], *, guaranteed: bool = True) -> dict[str, Any]:
    key = "limits" if guaranteed else "requests"
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {
            "containers": [
                {"name": c, "resources": {key: res}} for c, res in containers.items()
            ]
        },
    }


def _source(memory_manager: bool) -> dict[str, Any]:
    """The run whose checkpoints the restored scenarios start from: two
    Guaranteed pods (one with two containers), a Burstable one and, with
    the Static memory manager, one too big for NUMA node 0's memory."""
    kubelet: dict[str, Any] = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
    pods = [
        _pod("a", {"c1": {"cpu": "2", "memory": "1Gi"}, "c2": {"cpu": "1", "memory": "512Mi"}}),
        _pod("b", {"main": {"cpu": "3", "memory": "2Gi"}}),
        _pod("c", {"burst": {"cpu": "1", "memory": "1Gi"}}, guaranteed=False),
    ]
    if memory_manager:
        kubelet |= {
            "memoryManagerPolicy": "Static",
            "topologyManagerPolicy": "single-numa-node",
            "kubeReserved": {"memory": "1Gi"},
            "evictionHard": {"memory.available": "100Mi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
        }
        pods.append(_pod("d", {"big": {"cpu": "2", "memory": "14Gi"}}))
    return {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": {
            "name": "n1",
            "synthetic": {
                "sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 8,
                "threadsPerCore": 1, "memoryPerNumaNode": "16Gi",
            },
        },
        "kubeletConfig": kubelet,
        "steps": [{"addPod": p} for p in pods],
    }


def _podnuma(*args: str) -> str:
    got = CliRunner().invoke(cli, list(args))
    assert got.exit_code == 0, (args, got.output, got.exception)
    return got.stdout


def _restored(tmp_path: Path, memory_manager: bool, how: str) -> dict[str, Any]:
    """A scenario starting from the source run's checkpoints: ``inspect``
    (``state inspect --as-scenario``: no ``state.pods``, no steps) or
    ``restart`` (``restart --as-scenario``: ``state.pods`` and an ``addPod``
    re-admitting each pod)."""
    src = tmp_path / "source.yaml"
    src.write_text(yaml.safe_dump(_source(memory_manager), sort_keys=False))
    if how == "inspect":
        ck = tmp_path / "ck"
        _podnuma("simulate", str(src), "--checkpoint-dir", str(ck), "-o", "json")
        text = _podnuma(
            "state", "inspect", str(ck), "--node", str(src), "--kubelet-config", str(src),
            "--as-scenario", "-o", "yaml",
        )
    else:
        out = tmp_path / "restart.yaml"
        _podnuma("restart", str(src), "--as-scenario", str(out), "-o", "json")
        text = out.read_text()
    doc: dict[str, Any] = yaml.safe_load(text)
    assert doc["state"]["cpuManager"]["entries"]
    assert ("pods" in doc["state"]) == (how == "restart")
    return doc


def _write(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _cpus(text: str) -> CPUSet:
    return CPUSet.parse(text)


def _expected(scenario: dict[str, Any], sim: dict[str, Any]) -> tuple[dict[str, CPUSet], dict[tuple[tuple[int, ...], str], int]]:
    """The CPU owners (name -> CPUs) and the memory pinned by running pods
    ((NUMA nodes, type) -> bytes) that ``simulate -o json`` of
    ``scenario`` says: the running pods are those of the starting
    checkpoints and ``state.pods`` (named NAMESPACE/NAME by it, else by
    UID), then the steps'; each live container owns its checkpoint entry."""
    all_cpus = _cpus(sim["node"]["cpus"])
    reserved = _cpus(sim["node"]["reservedCpus"])
    steps = sim["steps"]
    cpu_cp = sim["checkpoints"]["cpuManager"]
    mem_cp = sim["checkpoints"]["memoryManager"]
    default = _cpus(steps[-1]["defaultCpuSet"] if steps else cpu_cp["defaultCpuSet"])
    if default.is_empty():
        default = all_cpus
    state = scenario.get("state", {})
    names = {
        p["metadata"]["uid"]: f'{p["metadata"]["namespace"]}/{p["metadata"]["name"]}'
        for p in state.get("pods", [])
    }
    start = set(state["cpuManager"].get("entries") or {}) | set(names)
    if "memoryManager" in state:
        start |= set(state["memoryManager"].get("entries") or {})
    running = {uid: names.get(uid, uid) for uid in start}
    stopped: dict[str, set[str]] = {}
    for s in steps:
        uid = s["podUID"]
        if s["op"] == "addPod":
            if s["admitted"]:
                running[uid] = s["pod"]
                stopped.pop(uid, None)
            else:
                running.pop(uid, None)
        elif s["op"] == "removePod":
            running.pop(uid, None)
        elif s["op"] == "removeContainer":
            stopped.setdefault(uid, set()).add(s["container"])

    owners: dict[str, CPUSet] = {}
    taken = CPUSet()
    for uid, containers in (cpu_cp.get("entries") or {}).items():
        if uid not in running:
            continue
        for name, text in containers.items():
            if name in stopped.get(uid, ()):
                continue
            cpus = _cpus(text)
            assert (cpus & taken).is_empty() and (cpus & default).is_empty()
            taken |= cpus
            owners[f"exclusive: {running[uid]}/{name}"] = cpus
    owners[RESERVED] = reserved - taken
    owners[NODE_SHARED] = default - taken - reserved
    owners[HELD] = all_cpus - default - taken - reserved
    owners = {k: v for k, v in owners.items() if not v.is_empty()}

    pinned: dict[tuple[tuple[int, ...], str], int] = {}
    for uid, containers in (mem_cp.get("entries") or {}).items():
        if uid not in running:
            continue
        for name, blocks in containers.items():
            if name in stopped.get(uid, ()):
                continue
            for b in blocks:
                if b["size"]:
                    key = (tuple(b["numaAffinity"]), b["type"])
                    pinned[key] = pinned.get(key, 0) + b["size"]
    if mem_cp.get("machineState") and not stopped:
        # the memory manager's own count of what it reserved, per NUMA node
        for node, st in mem_cp["machineState"].items():
            for kind, m in st["memoryMap"].items():
                assert m["reserved"] == sum(
                    v for (nodes, t), v in pinned.items() if nodes == (int(node),) and t == kind
                )
    return owners, pinned


def _actual(doc: dict[str, Any]) -> tuple[dict[str, CPUSet], dict[tuple[tuple[int, ...], str], int]]:
    owners = {o["name"]: _cpus(o["cpus"]) for o in doc["owners"]}
    for o in doc["owners"]:
        if o["kind"] == "exclusive":
            assert o["name"] == f'exclusive: {o["pod"]}/{o["container"]}'
    pinned = {
        (tuple(p["numaNodes"]), t): v for p in doc["pinnedMemory"] for t, v in p["bytes"].items()
    }
    return owners, pinned


def _check(tmp_path: Path, scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """``topology -o json`` of ``scenario`` after each step (with no step,
    when it has none) against ``simulate -o json`` of its steps up to
    there; the topology documents, in order."""
    full = _write(tmp_path, "scenario.yaml", scenario)
    n = len(scenario["steps"])
    docs = []
    for k in range(n) if n else [None]:
        upto = copy.deepcopy(scenario)
        upto["steps"] = [] if k is None else scenario["steps"][: k + 1]
        path = _write(tmp_path, f"upto-{k}.yaml", upto)
        sim = json.loads(_podnuma("simulate", str(path), "-o", "json"))
        step_args = ("--step", str(k)) if k is not None else ()
        topo = json.loads(_podnuma("topology", str(full), *step_args, "-o", "json"))
        assert topo["step"] == k
        # the scenario cut after the step draws the same
        assert json.loads(_podnuma("topology", str(path), "-o", "json")) == topo
        assert _actual(topo) == _expected(scenario, sim), f"after step {k}"
        docs.append(topo)
    return docs


def _owners(doc: dict[str, Any]) -> dict[str, str]:
    return {o["name"]: o["cpus"] for o in doc["owners"]}


@pytest.mark.parametrize("memory_manager", [False, True], ids=["cpu-only", "static-memory"])
@pytest.mark.parametrize("how", ["inspect", "restart"], ids=["checkpoints", "state-pods"])
def test_restored_state_without_steps(tmp_path: Path, memory_manager: bool, how: str) -> None:
    scenario = _restored(tmp_path, memory_manager, how)
    scenario["steps"] = []
    (doc,) = _check(tmp_path, scenario)
    a = "ns/a" if how == "restart" else "uid-a"
    b = "ns/b" if how == "restart" else "uid-b"
    owners = _owners(doc)
    assert doc["after"] == "before any step"
    assert owners[f"exclusive: {a}/c1"] == "1-2"
    assert owners[f"exclusive: {a}/c2"] == "3"
    assert owners[f"exclusive: {b}/main"] == "4-6"
    assert HELD not in owners
    if memory_manager:
        assert owners[f"exclusive: {'ns/d' if how == 'restart' else 'uid-d'}/big"] == "8-9"
        assert owners[NODE_SHARED] == "7,10-15"
        assert doc["pinnedMemory"] == [
            {"numaNodes": [0], "bytes": {"memory": (3 << 30) + (512 << 20)}},
            {"numaNodes": [1], "bytes": {"memory": 14 << 30}},
        ]
    else:
        assert owners[NODE_SHARED] == "7-15"
        assert doc["pinnedMemory"] == []


@pytest.mark.parametrize("memory_manager", [False, True], ids=["cpu-only", "static-memory"])
def test_restored_pods_named_by_uid_through_steps(tmp_path: Path, memory_manager: bool) -> None:
    """Checkpoints only (no ``state.pods``): the restored pods are named by
    UID; a reconcile keeps them (they are active), removeContainer and
    removePod of a restored pod take effect."""
    scenario = _restored(tmp_path, memory_manager, "inspect")
    scenario["steps"] = [
        {"reconcile": {}},
        {"addPod": _pod("e", {"x": {"cpu": "2", "memory": "1Gi"}})},
        {"removeContainer": {"pod": "uid-a", "container": "c2"}},
        {"removePod": "uid-b"},
        {"reconcile": {}},
    ]
    docs = _check(tmp_path, scenario)
    first = _owners(docs[0])
    assert first["exclusive: uid-a/c1"] == "1-2" and first["exclusive: uid-b/main"] == "4-6"
    assert HELD not in first
    last = _owners(docs[-1])
    assert "exclusive: uid-b/main" not in last and "exclusive: uid-a/c1" in last
    # the stopped container's CPU stays assigned until its pod goes
    assert last[HELD] == "3"
    assert "exclusive: ns/e/x" in last


@pytest.mark.parametrize("memory_manager", [False, True], ids=["cpu-only", "static-memory"])
def test_restart_scenario_through_steps(tmp_path: Path, memory_manager: bool) -> None:
    """``restart --as-scenario``: ``state.pods`` names the restored pods,
    which hold their CPUs before their re-admission step and after it; a
    restored pod removed gives its CPUs back."""
    scenario = _restored(tmp_path, memory_manager, "restart")
    readmit = len(scenario["steps"])
    assert readmit >= 3
    scenario["steps"] = [
        {"reconcile": {}},
        *scenario["steps"],
        {"removePod": "ns/b"},
        {"addPod": _pod("e", {"x": {"cpu": "4", "memory": "1Gi"}})},
    ]
    docs = _check(tmp_path, scenario)
    for doc in docs[: readmit + 1]:
        owners = _owners(doc)
        assert owners["exclusive: ns/b/main"] == "4-6"
        assert HELD not in owners
    assert "exclusive: ns/b/main" not in _owners(docs[-2])


def test_restored_pod_level_pod(tmp_path: Path) -> None:
    """A pod-level pod restored with its spec (``restart --as-scenario``,
    no steps): its pod shared pool and exclusive container as simulate
    restores them, and its memory once: the pod's reservation."""
    out = tmp_path / "restart.yaml"
    _podnuma("restart", str(POD_LEVEL_MIXED), "--as-scenario", str(out), "-o", "json")
    scenario = yaml.safe_load(out.read_text())
    scenario["steps"] = []
    path = _write(tmp_path, "scenario.yaml", scenario)
    sim = json.loads(_podnuma("simulate", str(path), "-o", "json"))
    topo = json.loads(_podnuma("topology", str(path), "-o", "json"))
    cpu_data = json.loads(sim["checkpoints"]["cpuManager"]["data"])
    mem_cp = sim["checkpoints"]["memoryManager"]
    mem_data = json.loads(mem_cp["data"])
    ((uid, pod_entry),) = cpu_data["podEntries"].items()
    entries = cpu_data["entries"][uid]
    exclusive = _cpus(entries["container-1"])
    owners = {o["name"]: _cpus(o["cpus"]) for o in topo["owners"]}
    assert owners == {
        RESERVED: _cpus(sim["node"]["reservedCpus"]),
        NODE_SHARED: _cpus(cpu_data["defaultCpuSet"]) - _cpus(sim["node"]["reservedCpus"]),
        "exclusive: kep/pod-scope-mixed/container-1": exclusive,
        "pod shared pool of kep/pod-scope-mixed": _cpus(pod_entry["cpuSet"]) - exclusive,
    }
    assert _cpus(entries["container-2"]) == _cpus(pod_entry["cpuSet"]) - exclusive
    pinned = _actual(topo)[1]
    budget = {
        (tuple(b["numaAffinity"]), b["type"]): b["size"]
        for b in mem_data["podEntries"][uid]["memoryBlocks"]
    }
    assert pinned == budget
    for node, st in mem_cp["machineState"].items():
        for kind, m in st["memoryMap"].items():
            assert m["reserved"] == pinned.get(((int(node),), kind), 0)


def test_restored_pod_level_pod_without_its_spec(tmp_path: Path) -> None:
    """A pod-level pod restored from checkpoints alone (``state inspect
    --as-scenario``: no ``state.pods``): the pod's reservation as the node
    restored it (its pod entries), its memory counted once."""
    sd = tmp_path / "sd"
    _podnuma("simulate", str(POD_LEVEL_MIXED), "-o", "json", "--checkpoint-dir", str(sd))
    doc = yaml.safe_load(_podnuma("state", "inspect", str(sd), "--as-scenario", "--node", str(POD_LEVEL_MIXED),
                                  "--kubelet-config", str(POD_LEVEL_MIXED)))
    assert "pods" not in doc["state"]
    path = _write(tmp_path, "scenario.yaml", doc)
    sim = json.loads(_podnuma("simulate", str(path), "-o", "json"))
    topo = json.loads(_podnuma("topology", str(path), "-o", "json"))
    mem_cp = sim["checkpoints"]["memoryManager"]
    ((uid, entry),) = json.loads(mem_cp["data"])["podEntries"].items()
    budget = {(tuple(b["numaAffinity"]), b["type"]): b["size"] for b in entry["memoryBlocks"]}
    assert _actual(topo)[1] == budget
    cpu_data = json.loads(sim["checkpoints"]["cpuManager"]["data"])
    owned = CPUSet()
    for o in topo["owners"]:
        if o["name"] not in (RESERVED, NODE_SHARED):
            owned |= _cpus(o["cpus"])
    assert owned == _cpus(cpu_data["podEntries"][uid]["cpuSet"])


def test_every_format_shows_the_restored_pods(tmp_path: Path) -> None:
    scenario = _restored(tmp_path, True, "inspect")
    scenario["steps"] = [{"reconcile": {}}]
    path = _write(tmp_path, "scenario.yaml", scenario)
    doc = json.loads(_podnuma("topology", str(path), "-o", "json"))
    assert yaml.safe_load(_podnuma("topology", str(path), "-o", "yaml")) == doc
    names = [o["name"] for o in doc["owners"]]
    assert "exclusive: uid-a/c1" in names and HELD not in names
    for fmt in ("table", "text"):
        text = _podnuma("topology", str(path), "-o", fmt)
        assert "exclusive: uid-a/c1" in text and "exclusive: uid-d/big" in text
        assert HELD not in text
        assert "pinned by pods: 3584Mi" in text and "pinned by pods: 14Gi" in text
    root = ET.fromstring(_podnuma("topology", str(path), "-o", "svg"))
    pus = {e.attrib["data-cpu"]: e.attrib["data-owner"] for e in root.iter(f"{SVG_NS}rect") if "data-cpu" in e.attrib}
    assert pus["1"] == pus["2"] == "exclusive: uid-a/c1"
    assert pus["9"] == "exclusive: uid-d/big"
    png = tmp_path / "picture.png"
    _podnuma("topology", str(path), "--output-file", str(png))
    from PIL import Image

    img = Image.open(io.BytesIO(png.read_bytes())).convert("RGB")
    colors = {c for _, c in img.getcolors(maxcolors=1 << 20) or []}
    own = service.topology(TextInput(path.read_text(), str(path), base_dir=tmp_path)).ownership
    for o in own.owners:
        assert tuple(int(o.color[i : i + 2], 16) for i in (1, 3, 5)) in colors, o.name
    png.unlink()


@pytest.mark.parametrize("how", ["inspect", "restart"], ids=["checkpoints", "state-pods"])
def test_run_kept_without_checkpoints(tmp_path: Path, how: str) -> None:
    """A run kept without its checkpoints (``run_scenario(...,
    checkpoints=False)``) draws the same start: the shared pool is what the
    restored pods leave."""
    from podnuma.inputs.scenario import load_scenario_text
    from podnuma.render.picture import ownership_after
    from podnuma.scenario.run import run_scenario

    scenario = _restored(tmp_path, True, how)
    scenario["steps"] = []
    loaded = load_scenario_text(yaml.safe_dump(scenario), name="s.yaml", base_dir=tmp_path)
    kept = ownership_after(run_scenario(loaded))
    bare = ownership_after(run_scenario(loaded, checkpoints=False))
    assert [(o.name, o.cpus) for o in bare.owners] == [(o.name, o.cpus) for o in kept.owners]
    assert bare.pinned == kept.pinned
    assert kept.by_name(NODE_SHARED).cpus == CPUSet.parse("7,10-15")

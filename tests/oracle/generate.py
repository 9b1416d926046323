"""Seeded random scenarios for the differential suite.

``scenario(seed, index)`` is a pure function of its arguments: the same pair
always gives the same scenario document (a ``dict`` in the public scenario
format), so a failure is reproduced from the seed printed by the suite.

Coverage: 1-8 NUMA nodes (synthetic machines, and cadvisor ``machineInfo``
with offline CPUs, more sockets than NUMA nodes, or odd shapes), SMT 1/2/4,
uncore caches, distances; every topology policy x scope x option; every CPU
manager option in valid combinations; the Static memory manager with 2Mi and
1Gi hugepages; device-plugin devices; init containers, sidecars, pod-level
pods with the PodLevelResources / PodLevelResourceManagers gates on and off;
container and pod removals; pods restored from checkpoints (``state:``,
written by running an earlier life of the node through podnuma).

About three scenarios in ten (``FOCUS_SHARE``, picked from a random stream
of their own, ``focus:SEED:INDEX``, so the others are exactly what they
were before these kinds existed) are of a focused kind (``FOCUS_KINDS``):
``plr-static-memory`` (pod-level pods with exclusive and shared sidecars
and standard init containers, fractional-CPU, cpu-only, requests-only and
hugepage containers, devices, budgets as requests and limits, limits only,
requests only, Burstable, one resource only, or tight, under the Static
memory manager), ``many-numa`` (4-10 NUMA nodes, mostly
``single-numa-node`` with pod scope; past 8 with
``max-allowable-numa-nodes``), ``cpu-options-plr`` (up to three static
policy options with large pod-level budgets, uncore caches more often),
``restore-remove`` (a node restarted with up to five pods, pod-level ones
included, its checkpoints in every format version, then re-admitted,
removed, their containers stopped), ``churn`` (12-30 steps, a third of them
removals, reconcile passes), ``memory-span`` (the Static memory manager with
containers and init containers near or above a NUMA node's memory or
hugepages: NUMA groups) and ``big-machine`` (32-128 CPUs, uncore caches of
2-8 cores, containers of up to 24 CPUs, churn). Their configurations add
``systemReserved``, percentage ``memory.available`` thresholds (a
``reservedMemory`` in bytes to match), the ``none`` CPU policy beside the
Static memory manager, and an ``apiServer`` with gates of its own (a
kubelet with ``PodLevelResources`` off behind one that keeps it, or the
reverse); their pods now and then carry an overhead or an ephemeral
container, or quantities spelled in other units (``1000m``, ``2.0``,
bytes, ``Ki``, decimal ``M``/``G``). ``scenario(..., focus=False)`` never
gives one.

Most scenarios are ones the kubelet starts with; a few are not (both
engines must then refuse them alike). A few hold a pod the API server
refuses (``podgen.with_invalid_pod``): both engines must refuse it at that
step. Removal steps that would name a pod
that is not running are dropped (podnuma decides which pods run), so the
scenarios are valid input.
"""

from __future__ import annotations

import copy
import json
import random
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.oracle import podgen

__all__ = ["scenario", "scenarios"]

Doc = dict[str, Any]

MI = 1024**2
GI = 1024**3

CPU_OPTIONS = (
    "full-pcpus-only",
    "distribute-cpus-across-numa",
    "align-by-socket",
    "distribute-cpus-across-cores",
    "strict-cpu-reservation",
    "prefer-align-cpus-by-uncorecache",
)
_EXCLUSIVE = {
    frozenset({"full-pcpus-only", "distribute-cpus-across-cores"}),
    frozenset({"distribute-cpus-across-numa", "distribute-cpus-across-cores"}),
    frozenset({"prefer-align-cpus-by-uncorecache", "distribute-cpus-across-cores"}),
    frozenset({"prefer-align-cpus-by-uncorecache", "distribute-cpus-across-numa"}),
}
TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
GPU = "example.com/gpu"
NIC = "example.com/nic"


def _qty_mi(n: int) -> str:
    return f"{n}Mi" if n % 1024 else f"{n // 1024}Gi"


# -- the machine -----------------------------------------------------------------------


def _distances(rng: random.Random, numa_ids: list[int], per_socket: int) -> list[list[int]]:
    n = len(numa_ids)
    d = [[10] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            same = i // max(per_socket, 1) == j // max(per_socket, 1)
            v = rng.choice((11, 12, 13) if same else (20, 21, 22, 31, 32))
            d[i][j] = d[j][i] = v
    return d


def _synthetic(rng: random.Random) -> tuple[Doc, dict[str, Any]]:
    shapes = [(1, 1), (1, 2), (2, 1), (2, 2), (1, 4), (4, 1), (2, 4), (4, 2), (1, 8), (8, 1), (1, 3), (3, 1)]
    sockets, per_socket = rng.choice(shapes)
    numa = sockets * per_socket
    threads = rng.choice((1, 2, 2, 2, 4))
    max_cores = max(1, 24 // (numa * threads))
    cores = rng.randint(1, min(6, max_cores) if max_cores > 1 else 1)
    cores = max(cores, 1)
    syn: Doc = {
        "sockets": sockets,
        "numaNodesPerSocket": per_socket,
        "coresPerNumaNode": cores,
        "threadsPerCore": threads,
    }
    if cores > 1 and rng.random() < 0.35:
        divisors = [d for d in range(1, cores) if cores % d == 0]
        syn["coresPerUncoreCache"] = rng.choice(divisors)
    mem_gi = rng.choice((4, 8, 16))
    syn["memoryPerNumaNode"] = f"{mem_gi}Gi"
    hp: dict[str, str] = {}
    if rng.random() < 0.4:
        hp["hugepages-2Mi"] = rng.choice(("256Mi", "512Mi", "1Gi"))
    if rng.random() < 0.3:
        hp["hugepages-1Gi"] = rng.choice(("1Gi", "2Gi"))
    if hp:
        syn["hugepagesPerNumaNode"] = hp
    if numa > 1 and rng.random() < 0.5:
        syn["distances"] = _distances(rng, list(range(numa)), per_socket)
    info = {
        "numa": list(range(numa)),
        "cpus": numa * cores * threads,
        "threads": threads,
        "sockets": sockets,
        "mem": mem_gi * GI,
        "hugepages": hp,
    }
    return {"synthetic": syn}, info


def _machine_info(rng: random.Random) -> tuple[Doc, dict[str, Any]]:
    """A cadvisor MachineInfo: offline CPUs (threads missing), sockets
    spanning NUMA nodes or NUMA nodes spanning sockets, uncore caches."""
    numa = rng.choice((1, 2, 2, 3, 4))
    sockets_per_numa = rng.choice((1, 1, 2)) if numa <= 2 else 1
    threads = rng.choice((1, 2, 2, 4))
    cores_per_socket = rng.randint(1, 4)
    nodes = []
    cpu = 0
    core_label = 0
    total_threads = 0
    sockets = set()
    uncore_size = rng.choice((0, 0, 2))
    all_cores = []
    for nid in range(numa):
        for s in range(sockets_per_numa):
            socket = nid * sockets_per_numa + s if sockets_per_numa > 1 else (nid if rng.random() < 0.7 else 0)
            sockets.add(socket)
            for _c in range(cores_per_socket):
                all_cores.append((nid, socket, core_label))
                core_label += 1
    n_cores = len(all_cores)
    # Linux numbering: first threads of every core, then the second threads...
    thread_ids: dict[int, list[int]] = {i: [] for i in range(n_cores)}
    for _t in range(threads):
        for i in range(n_cores):
            thread_ids[i].append(cpu)
            cpu += 1
    offline = set()
    if rng.random() < 0.5 and cpu > 2:
        offline = set(rng.sample(range(1, cpu), rng.randint(1, max(1, cpu // 6))))
    mem_gi = rng.choice((4, 8))
    hp_2m = rng.random() < 0.3
    for nid in range(numa):
        cores = []
        for i, (cn, socket, label) in enumerate(all_cores):
            if cn != nid:
                continue
            tids = [t for t in thread_ids[i] if t not in offline]
            if not tids:
                continue
            total_threads += len(tids)
            core: Doc = {"core_id": label, "thread_ids": tids, "socket_id": socket}
            if uncore_size:
                core["uncore_caches"] = [{"id": i // uncore_size, "size": 33554432, "type": "Unified", "level": 3}]
            cores.append(core)
        node: Doc = {"node_id": nid, "memory": mem_gi * GI, "cores": cores}
        if hp_2m:
            node["hugepages"] = [{"page_size": 2048, "num_pages": 256}, {"page_size": 1048576, "num_pages": 0}]
        if numa > 1:
            node["distances"] = [10 if j == nid else 21 for j in range(numa)]
        nodes.append(node)
    mi = {
        "num_cores": total_threads,
        "num_physical_cores": n_cores,
        "num_sockets": len(sockets),
        "memory_capacity": numa * mem_gi * GI,
        "topology": nodes,
    }
    info = {
        "numa": list(range(numa)),
        "cpus": total_threads,
        "threads": threads,
        "sockets": len(sockets),
        "mem": mem_gi * GI,
        "hugepages": {"hugepages-2Mi": "512Mi"} if hp_2m else {},
        "online": sorted(set(range(cpu)) - offline),
    }
    return {"machineInfo": mi}, info


def _devices(rng: random.Random, numa: list[int], policy: str) -> dict[str, list[Doc]]:
    out: dict[str, list[Doc]] = {}
    # The oracle's device plugin makes every pick the device manager leaves
    # to it deterministic, so devices spread over NUMA nodes under every
    # policy (now and then all on one node, as on many machines).
    spread = rng.random() < 0.85
    n = rng.randint(1, 4)
    home = rng.choice(numa)
    gpus = []
    for i in range(n):
        nodes = [rng.choice(numa)] if spread else [home]
        gpus.append({"id": f"gpu{i}", "numaNodes": nodes})
    out[GPU] = gpus
    if rng.random() < 0.3:
        out[NIC] = [{"id": f"nic{i}", "numaNodes": []} for i in range(rng.randint(1, 2))]
    return out


# -- kubelet configuration ------------------------------------------------------------------


def _kubelet_config(rng: random.Random, info: Mapping[str, Any]) -> tuple[Doc, dict[str, Any]]:
    cfg: Doc = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
    gates: dict[str, bool] = {}
    facts: dict[str, Any] = {}
    plr = rng.random() < 0.9
    plrm = plr and rng.random() < 0.55
    if not plr:
        # the gates that depend on PodLevelResources must go with it
        gates.update(
            {
                "PodLevelResources": False,
                "PodLevelResourcesFixDefaulting": False,
                "PodLevelResourcesFixKubeletQOSClass": False,
                "InPlacePodLevelResourcesVerticalScaling": False,
            }
        )
    if plrm:
        gates["PodLevelResourceManagers"] = True
    facts["plr"], facts["plrm"] = plr, plrm

    static = rng.random() < 0.85
    cfg["cpuManagerPolicy"] = "static" if static else "none"
    facts["static"] = static
    cpus = info.get("online") or list(range(info["cpus"]))
    if static:
        if rng.random() < 0.5 and len(cpus) > 1:
            k = rng.choice((1, 1, 2)) if len(cpus) > 3 else 1
            cfg["reservedSystemCPUs"] = ",".join(str(c) for c in sorted(rng.sample(cpus, k)))
        else:
            cfg["kubeReserved"] = {"cpu": rng.choice(("1", "500m", "2", "1500m")) if len(cpus) > 2 else "500m"}
        opts: dict[str, str] = {}
        for o in rng.sample(CPU_OPTIONS, rng.randint(0, 3)):
            if any(frozenset({o, p}) in _EXCLUSIVE for p in opts):
                continue
            opts[o] = "true"
        if opts:
            cfg["cpuManagerPolicyOptions"] = opts
        if "align-by-socket" in opts or "distribute-cpus-across-cores" in opts:
            gates["CPUManagerPolicyAlphaOptions"] = True
        facts["cpu_options"] = opts
    else:
        facts["cpu_options"] = {}

    policy = rng.choice(TOPOLOGY_POLICIES)
    if "align-by-socket" in facts["cpu_options"] and policy == "single-numa-node" and rng.random() < 0.8:
        policy = "restricted"
    cfg["topologyManagerPolicy"] = policy
    cfg["topologyManagerScope"] = rng.choice(("container", "pod"))
    topts: dict[str, str] = {}
    if rng.random() < 0.3:
        topts["prefer-closest-numa-nodes"] = rng.choice(("true", "false"))
    if rng.random() < 0.15:
        topts["max-allowable-numa-nodes"] = rng.choice(("8", "10"))
    if topts:
        cfg["topologyManagerPolicyOptions"] = topts
    facts["policy"] = policy

    mem_static = rng.random() < 0.45
    facts["mem_static"] = mem_static
    if mem_static:
        cfg["memoryManagerPolicy"] = "Static"
        kube_mi = rng.choice((256, 412, 924))
        cfg.setdefault("kubeReserved", {})["memory"] = _qty_mi(kube_mi)
        cfg["evictionHard"] = {"memory.available": "100Mi"}
        total = kube_mi + 100
        numa = info["numa"]
        if len(numa) > 1 and rng.random() < 0.4:
            first = total // 2
            cfg["reservedMemory"] = [
                {"numaNode": numa[0], "limits": {"memory": _qty_mi(first)}},
                {"numaNode": numa[1], "limits": {"memory": _qty_mi(total - first)}},
            ]
        else:
            cfg["reservedMemory"] = [{"numaNode": rng.choice(numa), "limits": {"memory": _qty_mi(total)}}]
    if gates:
        cfg["featureGates"] = gates
    return cfg, facts


# -- pods ---------------------------------------------------------------------------------


def _resources(
    rng: random.Random, qos: str, info: Mapping[str, Any], devices: Mapping[str, list[Doc]], *, allow_hp: bool
) -> Doc:
    if qos == "BestEffort":
        return {}
    cpu = rng.choice(("1", "1", "2", "2", "3", "4", "500m", "1500m", "6"))
    mem = rng.choice((64, 128, 256, 512, 1024, 2048))
    limits: dict[str, str] = {"cpu": cpu, "memory": _qty_mi(mem)}
    if allow_hp and info["hugepages"] and rng.random() < 0.4:
        size = rng.choice(sorted(info["hugepages"]))
        limits[size] = rng.choice(("2Mi", "4Mi", "64Mi")) if size == "hugepages-2Mi" else "1Gi"
    if devices and rng.random() < 0.35:
        res = rng.choice(sorted(devices))
        limits[res] = str(rng.randint(1, 2))
    if qos == "Guaranteed":
        if rng.random() < 0.5:
            return {"limits": limits}
        return {"requests": dict(limits), "limits": limits}
    # Burstable: requests below limits (or requests only)
    req = {"cpu": rng.choice(("250m", "1", "2")), "memory": _qty_mi(max(32, mem // 2))}
    out: Doc = {"requests": req}
    if rng.random() < 0.6:
        lim = dict(limits)
        lim["cpu"] = str(max(2, int(float(lim["cpu"].rstrip("m")) / (1000 if lim["cpu"].endswith("m") else 1)) + 1))
        out["limits"] = lim
        for k, v in limits.items():
            if k.startswith("hugepages-") or k in (GPU, NIC):
                out["requests"][k] = v
    return out


def _classic_pod(
    rng: random.Random, name: str, info: Mapping[str, Any], devices: Mapping[str, list[Doc]]
) -> Doc:
    qos = rng.choices(("Guaranteed", "Burstable", "BestEffort"), (6, 3, 1))[0]
    spec: Doc = {"containers": []}
    for i in range(rng.randint(1, 3)):
        spec["containers"].append({"name": f"c{i}", "resources": _resources(rng, qos, info, devices, allow_hp=True)})
    inits = []
    for i in range(rng.choice((0, 0, 0, 1, 2))):
        c: Doc = {"name": f"init{i}", "resources": _resources(rng, qos, info, devices, allow_hp=True)}
        if rng.random() < 0.45:
            c["restartPolicy"] = "Always"
        inits.append(c)
    if inits:
        spec["initContainers"] = inits
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"}, "spec": spec}


def _pod_level_pod(rng: random.Random, name: str, info: Mapping[str, Any]) -> Doc:
    """A pod with spec.resources: exclusive slices (request = limit, integer
    or fractional CPU) and shared containers (no resources) within the
    budget."""
    guaranteed = rng.random() < 0.85
    containers = []
    cpu_sum = 0.0
    mem_sum = 0
    for i in range(rng.randint(1, 3)):
        if rng.random() < 0.55:
            cpu = rng.choice(("1", "1", "2", "1500m"))
            mem = rng.choice((128, 256, 512))
            cpu_sum += float(cpu.rstrip("m")) / (1000 if cpu.endswith("m") else 1)
            mem_sum += mem
            containers.append({"name": f"c{i}", "resources": {"limits": {"cpu": cpu, "memory": _qty_mi(mem)}}})
        else:
            containers.append({"name": f"c{i}"})
    inits = []
    for i in range(rng.choice((0, 0, 1, 2))):
        c: Doc = {"name": f"init{i}"}
        if rng.random() < 0.5:
            c["restartPolicy"] = "Always"
        if rng.random() < 0.5:
            cpu = rng.choice(("1", "2"))
            c["resources"] = {"limits": {"cpu": cpu, "memory": "128Mi"}}
            if c.get("restartPolicy") == "Always":
                cpu_sum += int(cpu)
                mem_sum += 128
        inits.append(c)
    extra = rng.choice((0, 0, 1, 2))
    budget_cpu = max(1, int(cpu_sum + 0.999) + extra)
    if any("resources" in c and c["resources"]["limits"]["cpu"] == "2" for c in inits):
        budget_cpu = max(budget_cpu, 2 + int(cpu_sum))
    budget_mem = mem_sum + rng.choice((0, 256, 512))
    budget_mem = max(budget_mem, 256)
    cpu_q = str(budget_cpu) if rng.random() < 0.85 else f"{budget_cpu * 1000 + 500}m"
    res: Doc
    if guaranteed:
        res = {"requests": {"cpu": cpu_q, "memory": _qty_mi(budget_mem)}, "limits": {"cpu": cpu_q, "memory": _qty_mi(budget_mem)}}
    else:
        res = {"requests": {"cpu": cpu_q, "memory": _qty_mi(budget_mem)}, "limits": {"cpu": str(budget_cpu + 2), "memory": _qty_mi(budget_mem * 2)}}
    if info["hugepages"] and rng.random() < 0.2:
        size = sorted(info["hugepages"])[0]
        amount = "4Mi" if size == "hugepages-2Mi" else "1Gi"
        res["requests"][size] = amount
        res["limits"][size] = amount
    spec: Doc = {"resources": res, "containers": containers}
    if inits:
        spec["initContainers"] = inits
    return {"metadata": {"name": name, "namespace": "pl", "uid": f"uid-{name}"}, "spec": spec}


def _pod(rng: random.Random, name: str, info: Mapping[str, Any], devices: Mapping[str, list[Doc]], facts: Mapping[str, Any]) -> Doc:
    if facts["plr"] and rng.random() < 0.35:
        return _pod_level_pod(rng, name, info)
    return _classic_pod(rng, name, info, devices)


def _steps(
    rng: random.Random, info: Mapping[str, Any], devices: Mapping[str, list[Doc]], facts: Mapping[str, Any], prefix: str, n: int
) -> list[Doc]:
    steps: list[Doc] = []
    added: list[Doc] = []
    for i in range(n):
        r = rng.random()
        if added and r < 0.15:
            p = rng.choice(added)
            steps.append({"removePod": f"{p['metadata']['namespace']}/{p['metadata']['name']}"})
        elif added and r < 0.25:
            p = rng.choice(added)
            names = [c["name"] for c in p["spec"].get("initContainers", [])] + [c["name"] for c in p["spec"]["containers"]]
            steps.append({"removeContainer": {"pod": p["metadata"]["uid"], "container": rng.choice(names)}})
        else:
            pod = _pod(rng, f"{prefix}{i}", info, devices, facts)
            added.append(pod)
            steps.append({"addPod": pod})
    return steps


# -- starting checkpoints in every format version --------------------------------------------

#: The format versions of the starting checkpoints and how often each is
#: picked: kubelet v1.37 writes CPU V4 and memory V3 and reads back to CPU V2
#: and memory V1; CPU "V1" is the layout kubelets before v1.18 wrote
#: (entries keyed by container id), which v1.37 refuses.
CPU_VERSIONS = (1, 2, 2, 3, 3, 4, 4)
MEMORY_VERSIONS = (1, 1, 2, 2, 3, 3)


def _convert(oracle: str, manager: str, version: int, obj: Mapping[str, Any]) -> Doc | None:
    """A current-format checkpoint object written in format ``version`` by
    the kubelet's own types for that version (``kubelet-oracle
    legacy-checkpoint``)."""
    import json
    import subprocess

    proc = subprocess.run(
        [oracle, "legacy-checkpoint", manager, str(version)],
        input=json.dumps(obj).encode(), capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return None
    out: Doc = json.loads(proc.stdout)
    return out


def _cpu_v1(rng: random.Random, obj: Mapping[str, Any]) -> Doc:
    """A CPU checkpoint as kubelets before v1.18 wrote it: one entry per
    container id (``{"entries": {"ID": "CPUS"}}``), policy and default set
    at the top. Its checksum is of no matter: v1.37 fails to decode it."""
    import json

    data = json.loads(obj["data"]) if isinstance(obj.get("data"), str) else obj
    entries: dict[str, str] = {}
    for containers in (data.get("entries") or {}).values():
        for cpus in containers.values():
            entries["containerd://" + "".join(rng.choice("0123456789abcdef") for _ in range(16))] = cpus
    out: Doc = {"policyName": data.get("policyName", ""), "defaultCpuSet": data.get("defaultCpuSet", "")}
    if entries:
        out["entries"] = entries
    out["checksum"] = rng.randrange(1 << 32)
    return out


def _legacy_formats(doc: Doc, rng: random.Random, oracle: str | None) -> None:
    """Rewrite the scenario's starting checkpoints (current format, from an
    earlier life of the node) in a format version picked at random."""
    state = doc.get("state")
    if not isinstance(state, dict) or oracle is None:
        return
    cpu = state.get("cpuManager")
    if isinstance(cpu, dict):
        version = rng.choice(CPU_VERSIONS)
        if version == 1:
            state["cpuManager"] = _cpu_v1(rng, cpu)
        elif version < 4:
            state["cpuManager"] = _convert(oracle, "cpu", version, cpu) or cpu
    memory = state.get("memoryManager")
    if isinstance(memory, dict):
        version = rng.choice(MEMORY_VERSIONS)
        if version < 3:
            state["memoryManager"] = _convert(oracle, "memory", version, memory) or memory


def _running_specs(doc: Doc, rng: random.Random, running: list[Doc]) -> None:
    """Most of the time, give the specs of the pods still running at the
    restart (``state.pods``: the kubelet knows them from the API server);
    otherwise the pods stand in as their checkpoint entries."""
    state = doc.get("state")
    if isinstance(state, dict) and running and rng.random() < 0.7:
        state["pods"] = copy.deepcopy(running)


def _reconcile_passes(rng: random.Random, steps: list[Doc]) -> None:
    """Now and then, time passes between two steps: the CPU manager's
    reconcile loop makes a pass (a ``reconcile`` step)."""
    if rng.random() < 0.2:
        for _ in range(rng.randint(1, 2)):
            steps.insert(rng.randint(0, len(steps)), {"reconcile": {}})


# -- configurations the kubelet refuses ------------------------------------------------------


def _maybe_invalid_config(rng: random.Random, cfg: Doc, info: Mapping[str, Any], facts: Mapping[str, Any]) -> bool:
    """Now and then (about one scenario in twelve) make the configuration
    one the kubelet refuses to start with, in one of the ways its start-up
    checks catch; True when it did."""
    if rng.random() >= 0.08:
        return False
    numa = info["numa"]
    cpus = info.get("online") or list(range(info["cpus"]))
    gates = cfg.setdefault("featureGates", {})

    def static_memory() -> None:
        cfg["memoryManagerPolicy"] = "Static"
        cfg.setdefault("kubeReserved", {})["memory"] = "256Mi"
        cfg["evictionHard"] = {"memory.available": "100Mi"}
        cfg["reservedMemory"] = [{"numaNode": numa[0], "limits": {"memory": "356Mi"}}]

    def set_reserved(entries: list[Doc]) -> None:
        static_memory()
        cfg["reservedMemory"] = entries

    choices: list[Any] = [
        lambda: set_reserved([{"numaNode": numa[0], "limits": {"memory": "300Mi"}}]),  # sum mismatch
        lambda: set_reserved([{"numaNode": max(numa) + 1, "limits": {"memory": "356Mi"}}]),  # no such node
        lambda: set_reserved([{"numaNode": numa[0], "limits": {"memory": "356Mi", "hugepages-2Mi": "2Mi"}}]),
        lambda: set_reserved([{"numaNode": numa[0], "limits": {"memory": "356Mi", "cpu": "1"}}]),
        lambda: set_reserved([{"numaNode": numa[0], "limits": {"memory": "0"}}]),
        lambda: set_reserved([{"numaNode": numa[0], "limits": {"memory": "200Mi"}},
                              {"numaNode": numa[0], "limits": {"memory": "156Mi"}}]),
        lambda: (static_memory(), cfg.pop("reservedMemory")),  # Static without reservedMemory
        lambda: cfg.update(memoryManagerPolicy=rng.choice(("static", "none", "BestEffort"))),
        lambda: cfg.update(cpuManagerPolicy=rng.choice(("Static", "None", "dynamic"))),
        lambda: cfg.update(topologyManagerPolicy=rng.choice(("Restricted", "strict", "prefer"))),
        lambda: cfg.update(topologyManagerScope=rng.choice(("node", "Pod"))),
        lambda: cfg.update(topologyManagerPolicyOptions={rng.choice(("max-allowable-numa-nodes", "bogus")): "7"}),
        lambda: cfg.update(cpuManagerPolicy="static",
                           cpuManagerPolicyOptions={rng.choice(("bogus-option", "full-pcpus-only")): "maybe"}),
        lambda: cfg.update(cpuManagerPolicy="none", cpuManagerPolicyOptions={"full-pcpus-only": "true"}),
        lambda: (cfg.update(cpuManagerPolicy="static", cpuManagerPolicyOptions={"align-by-socket": "true"}),
                 gates.update(CPUManagerPolicyAlphaOptions=False)),
        lambda: cfg.update(cpuManagerPolicy="static", reservedSystemCPUs=f"{max(cpus) + rng.randint(1, 4)}"),
        lambda: (cfg.update(cpuManagerPolicy="static", kubeReserved={"cpu": "0"}), cfg.pop("reservedSystemCPUs", None)),
        lambda: cfg.update(kubeReserved={"cpu": str(info["cpus"] + 1)}),
        lambda: cfg.update(systemReserved={"memory": f"{len(numa) * info['mem'] // (1 << 30) + 1}Gi"}),
        lambda: cfg.update(evictionHard={"memory.available": rng.choice(("-1Gi", "150%", "1K"))}),
        lambda: gates.update(PodLevelResources=False, PodLevelResourceManagers=True),
        lambda: gates.update(NoSuchGate=True),
        lambda: (cfg.update(topologyManagerPolicy="single-numa-node",
                            topologyManagerPolicyOptions={"max-allowable-numa-nodes": "8"}),
                 gates.update(TopologyManagerPolicyOptions=False)),
    ]
    rng.choice(choices)()
    if not gates:
        cfg.pop("featureGates", None)
    return True


# -- assembly -----------------------------------------------------------------------------


def _drop_invalid_steps(doc: Doc, workdir: Path) -> Doc | None:
    """Remove steps podnuma rejects as invalid input (a removal naming a pod
    that is not running, a pod the API server would refuse); ``None`` when
    the scenario itself is unusable."""
    from tests.oracle.harness import run_podnuma, write_scenario

    for _ in range(len(doc["steps"]) + 2):
        path = write_scenario(doc, workdir / "gen-check.json")
        out = run_podnuma(path)
        if out.kind != "input":
            return doc
        msg = out.message
        marker = "steps["
        if marker not in msg:
            return None
        idx = int(msg.split(marker, 1)[1].split("]", 1)[0])
        del doc["steps"][idx]
        if not doc["steps"]:
            return None
    return doc


def _state_from_previous_life(doc: Doc, rng: random.Random, info: Mapping[str, Any], devices: Mapping[str, list[Doc]], facts: Mapping[str, Any], workdir: Path) -> list[Doc]:
    """Run an earlier life of the node through podnuma and start this one
    from its checkpoints; returns the pods still running (for re-admission
    and removal by uid)."""

    prev = copy.deepcopy(doc)
    prev.pop("state", None)
    prev["steps"] = [s for s in _steps(rng, info, devices, facts, "old", rng.randint(1, 4)) if "addPod" in s]
    return _started_from(doc, prev, workdir, devices)


def _started_from(doc: Doc, prev: Doc, workdir: Path, devices: Mapping[str, list[Doc]]) -> list[Doc]:
    """``doc`` started from the checkpoints podnuma writes running ``prev``
    (an earlier life of the node: pods added only); the pods of ``prev``
    still running (none, and ``doc`` unchanged, when no checkpoint has a
    pod)."""
    from tests.oracle.harness import run_podnuma, write_scenario

    path = write_scenario(prev, workdir / "gen-prev.json")
    out = run_podnuma(path)
    if out.kind != "ok" or out.doc is None:
        return []
    ck = out.doc["checkpoints"]
    state: Doc = {}
    if ck.get("cpuManager"):
        state["cpuManager"] = ck["cpuManager"]
    if ck.get("memoryManager"):
        state["memoryManager"] = ck["memoryManager"]
    if not state:
        return []
    if devices:
        state["deviceManager"] = _device_checkpoint(out.doc["steps"], devices)
    doc["state"] = state
    return [s["addPod"] for s, r in zip(prev["steps"], out.doc["steps"], strict=True) if r.get("admitted")]


def _device_checkpoint(steps: list[Doc], devices: Mapping[str, list[Doc]]) -> Doc:
    """The device manager's checkpoint after an earlier life: the devices of
    the admitted pods' containers, each under its NUMA nodes as the kubelet
    files them (-1: none), the node's devices registered; the allocation
    responses are the empty ones the oracle's plugin gives."""
    from podnuma.cm.devicemanager.checkpoint import DeviceEntry, encode_device_checkpoint

    numa = {res: {str(d["id"]): list(d.get("numaNodes") or [-1]) for d in items} for res, items in devices.items()}
    entries = []
    for st in steps:
        if not st.get("admitted"):
            continue
        for c in st.get("containers") or []:
            for res, ids in sorted((c.get("devices") or {}).items()):
                per_numa: dict[int, list[str]] = {}
                for dev_id in ids:
                    for node in numa.get(res, {}).get(dev_id, [-1]):
                        per_numa.setdefault(node, []).append(dev_id)
                entries.append(DeviceEntry(st["podUID"], c["name"], res, {n: tuple(v) for n, v in per_numa.items()}))
    registered = {res: [str(d["id"]) for d in items] for res, items in devices.items()}
    obj = json.loads(encode_device_checkpoint(entries, registered))
    assert isinstance(obj, dict)
    return obj


# -- focused scenarios ----------------------------------------------------------------------
#
# A share of every seed's scenarios (FOCUS_SHARE, drawn from a stream of its
# own, ``focus:SEED:INDEX``) is one of the focused kinds below instead of the
# general scenario; when that draw does not pick a focused kind, the scenario
# is exactly what the generator gave before these kinds existed
# (``scenario(..., focus=False)`` never picks one).

FOCUS_SHARE = 0.3
FOCUS_KINDS = ("plr-static-memory", "many-numa", "cpu-options-plr", "restore-remove", "churn", "memory-span", "big-machine")
_FOCUS_OPTIONS = (
    "full-pcpus-only",
    "distribute-cpus-across-numa",
    "align-by-socket",
    "strict-cpu-reservation",
    "prefer-align-cpus-by-uncorecache",
    "distribute-cpus-across-cores",
)


def _cpu_value(q: str) -> float:
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


def _rich_pod_level_pod(
    rng: random.Random, name: str, info: Mapping[str, Any], devices: Mapping[str, list[Doc]], *, big: bool = False
) -> Doc:
    """A pod-level pod with every kind of container the pod-level managers
    sort: exclusive slices (whole CPUs; fractional CPUs with exclusive
    memory; hugepages), containers with requests only, shared containers,
    exclusive and shared sidecars and standard init containers, devices;
    the budget given as requests and limits, limits only (requests
    defaulted), requests only, or for one resource only; sometimes tight
    (the exclusive slices use it up)."""
    whole = ("1", "2", "3", "4") if big else ("1", "1", "2")
    hp_size = sorted(info["hugepages"])[0] if info["hugepages"] and rng.random() < 0.3 else ""
    cpu_sum = 0.0
    mem_sum = 0
    hp_sum = 0
    containers: list[Doc] = []

    def make(cname: str, sidecar_or_app: bool) -> Doc:
        nonlocal cpu_sum, mem_sum, hp_sum
        c: Doc = {"name": cname}
        kind = rng.choices(("exclusive", "fractional", "requests", "shared", "cpu-only"), (5, 2, 2, 4, 1))[0]
        if kind == "shared":
            return c
        if kind == "requests":
            c["resources"] = {"requests": {"cpu": rng.choice(("250m", "500m", "1")), "memory": "64Mi"}}
            if sidecar_or_app:
                cpu_sum += _cpu_value(c["resources"]["requests"]["cpu"])
                mem_sum += 64
            return c
        cpu = rng.choice(whole) if kind != "fractional" else rng.choice(("500m", "1500m", "2500m"))
        mem = rng.choice((128, 256, 512))
        limits: Doc = {"cpu": cpu, "memory": _qty_mi(mem)}
        if kind == "cpu-only":
            limits = {"cpu": cpu}
            mem = 0
        if hp_size and rng.random() < 0.5:
            limits[hp_size] = "2Mi" if hp_size == "hugepages-2Mi" else "1Gi"
            if sidecar_or_app:
                hp_sum += 2 if hp_size == "hugepages-2Mi" else 1024
        if devices and rng.random() < 0.25:
            limits[rng.choice(sorted(devices))] = "1"
        c["resources"] = {"limits": limits} if rng.random() < 0.6 else {"requests": dict(limits), "limits": limits}
        if sidecar_or_app:
            cpu_sum += _cpu_value(cpu)
            mem_sum += mem
        return c

    inits: list[Doc] = []
    for i in range(rng.choice((0, 0, 1, 1, 2, 3))):
        sidecar = rng.random() < 0.55
        c = make(f"init{i}", sidecar)
        if sidecar:
            c["restartPolicy"] = "Always"
        inits.append(c)
    for i in range(rng.randint(1, 3)):
        containers.append(make(f"c{i}", True))
    # what a standard init container asks for must fit in the budget too
    init_cpu = max((_cpu_value(c.get("resources", {}).get("limits", c.get("resources", {}).get("requests", {})).get("cpu", "0"))
                    for c in inits if "restartPolicy" not in c), default=0.0)
    tight = rng.random() < 0.2
    extra = 0 if tight else rng.choice((1, 1, 2, 4))
    budget_cpu = max(1, int(cpu_sum + 0.999) + extra, int(init_cpu + 0.999) + int(cpu_sum + 0.999))
    budget_mem = max(256, mem_sum + (0 if tight else rng.choice((128, 256, 1024))), 512)
    cpu_q = str(budget_cpu) if rng.random() < 0.85 else f"{budget_cpu * 1000 + 500}m"
    req: Doc = {"cpu": cpu_q, "memory": _qty_mi(budget_mem)}
    lim: Doc = dict(req)
    if hp_size and (hp_sum or rng.random() < 0.5):
        amount = max(hp_sum, 2 if hp_size == "hugepages-2Mi" else 1024) + (0 if tight else (2 if hp_size == "hugepages-2Mi" else 0))
        req[hp_size] = lim[hp_size] = _qty_mi(amount)
    form = rng.choices(("both", "limits", "requests", "burstable", "cpu-only", "memory-only"), (10, 2, 1, 1, 1, 1))[0]
    res: Doc
    if form == "both":
        res = {"requests": req, "limits": lim}
    elif form == "limits":
        res = {"limits": lim}
    elif form == "requests":
        res = {"requests": req}
    elif form == "burstable":
        res = {"requests": req, "limits": {**lim, "cpu": str(budget_cpu + 2)}}
    elif form == "cpu-only":
        res = {"requests": {"cpu": cpu_q}, "limits": {"cpu": cpu_q}}
    else:
        res = {"requests": {"memory": req["memory"]}, "limits": {"memory": lim["memory"]}}
    spec: Doc = {"resources": res, "containers": containers}
    if inits:
        spec["initContainers"] = inits
    return {"metadata": {"name": name, "namespace": "pl", "uid": f"uid-{name}"}, "spec": spec}


def _memory_heavy_pod(rng: random.Random, name: str, info: Mapping[str, Any]) -> Doc:
    """A Guaranteed pod whose memory (or 1Gi hugepages) comes near a NUMA
    node's or goes past it: the Static memory manager must then group NUMA
    nodes. Pod-level now and then."""
    node_mi = info["mem"] // MI
    containers: list[Doc] = []
    total_mem = 0
    total_cpu = 0
    for i in range(rng.randint(1, 2)):
        mem = rng.choice((node_mi // 2, node_mi * 3 // 4, node_mi - 512, node_mi, node_mi + 1024, node_mi * 2))
        mem = max(256, mem // 256 * 256)
        cpu = rng.choice((1, 1, 2))
        limits: Doc = {"cpu": str(cpu), "memory": _qty_mi(mem)}
        if info["hugepages"] and rng.random() < 0.4:
            size = rng.choice(sorted(info["hugepages"]))
            limits[size] = rng.choice(("64Mi", "256Mi", "512Mi")) if size == "hugepages-2Mi" else rng.choice(("1Gi", "2Gi", "3Gi"))
        containers.append({"name": f"c{i}", "resources": {"limits": limits}})
        total_mem += mem
        total_cpu += cpu
    spec: Doc = {"containers": containers}
    if rng.random() < 0.3:
        init_mem = max(256, rng.choice((node_mi // 2, node_mi, node_mi + 512)) // 256 * 256)
        init: Doc = {"name": "init0", "resources": {"limits": {"cpu": "1", "memory": _qty_mi(init_mem)}}}
        if rng.random() < 0.5:
            init["restartPolicy"] = "Always"
            total_mem += init_mem
            total_cpu += 1
        spec["initContainers"] = [init]
    if rng.random() < 0.3:
        for c in containers:
            if rng.random() < 0.5:
                c.pop("resources")
        budget = {"cpu": str(total_cpu + rng.choice((0, 1))), "memory": _qty_mi(total_mem + rng.choice((0, 512)))}
        spec["resources"] = {"requests": dict(budget), "limits": budget}
    return {"metadata": {"name": name, "namespace": "mem", "uid": f"uid-{name}"}, "spec": spec}


def _extras(rng: random.Random, pod: Doc) -> Doc:
    """Now and then an overhead (as a RuntimeClass's admission sets it) or
    an ephemeral container."""
    r = rng.random()
    if r < 0.08:
        pod["spec"]["overhead"] = {"cpu": rng.choice(("100m", "250m", "1")), "memory": rng.choice(("64Mi", "120Mi"))}
    elif r < 0.12:
        pod["spec"]["ephemeralContainers"] = [{"name": "debug"}]
    return pod


def _spellings(rng: random.Random, name: str, value: str) -> str:
    """Another way to write a cpu or memory quantity: the same value in
    other units or forms, or (memory) a nearby value in decimal units."""
    from podnuma.api.quantity import parse_quantity

    q = parse_quantity(value)
    if name == "cpu":
        milli = q.milli_value()
        forms = [f"{milli}m", f"{milli / 1000:g}"]
        if milli % 1000 == 0:
            forms += [f"{milli // 1000}.0", f"{milli // 1000}"]
        return rng.choice(forms)
    if name == "memory":
        b = q.value()
        forms = [str(b), f"{b // 1024}Ki" if b % 1024 == 0 else str(b), f"{(b + 999_999) // 1_000_000}M", f"{b / 1e9:g}G",
                 f"{b // (1 << 20)}Mi"]
        return rng.choice(forms)
    return value


def _respell(rng: random.Random, pod: Doc) -> Doc:
    """Now and then write the pod's cpu and memory quantities differently
    (one spelling per written value, so requests equal to limits stay so)."""
    if rng.random() >= 0.2:
        return pod
    chosen: dict[tuple[str, str], str] = {}

    def walk(res: Any) -> None:
        if not isinstance(res, dict):
            return
        for part in ("requests", "limits"):
            values = res.get(part)
            if not isinstance(values, dict):
                continue
            for k, v in list(values.items()):
                if k in ("cpu", "memory") and isinstance(v, str):
                    key = (k, v)
                    if key not in chosen:
                        chosen[key] = _spellings(rng, k, v)
                    values[k] = chosen[key]

    spec = pod["spec"]
    walk(spec.get("resources"))
    for c in list(spec.get("initContainers") or []) + list(spec["containers"]):
        walk(c.get("resources"))
    return pod


def _focus_pod(rng: random.Random, name: str, info: Mapping[str, Any], devices: Mapping[str, list[Doc]], share: float, big: bool) -> Doc:
    if share > 1:
        pod = _big_pod(rng, name, info, devices)
    elif share < 0:
        pod = _memory_heavy_pod(rng, name, info) if rng.random() < 0.6 else _classic_pod(rng, name, info, devices)
    elif rng.random() < share:
        pod = _rich_pod_level_pod(rng, name, info, devices, big=big)
    else:
        pod = _classic_pod(rng, name, info, devices)
    return _respell(rng, _extras(rng, pod))


def _focus_steps(rng: random.Random, info: Mapping[str, Any], devices: Mapping[str, list[Doc]], prefix: str, n: int,
                 share: float, big: bool, running: list[Doc] | None = None, remove: float = 0.15) -> list[Doc]:
    steps: list[Doc] = []
    added: list[Doc] = list(running or [])
    for i in range(n):
        r = rng.random()
        if added and r < remove:
            p = rng.choice(added)
            steps.append({"removePod": rng.choice((p["metadata"]["uid"], f"{p['metadata']['namespace']}/{p['metadata']['name']}"))})
        elif added and r < remove + 0.12:
            p = rng.choice(added)
            names = [c["name"] for c in p["spec"].get("initContainers", [])] + [c["name"] for c in p["spec"]["containers"]]
            steps.append({"removeContainer": {"pod": p["metadata"]["uid"], "container": rng.choice(names)}})
        elif r < remove + 0.17:
            steps.append({"reconcile": {}})
        else:
            pod = _focus_pod(rng, f"{prefix}{i}", info, devices, share, big)
            added.append(pod)
            steps.append({"addPod": pod})
    return steps


def _focus_config(rng: random.Random, info: Mapping[str, Any], *, mem_static: float, scope_pod: float,
                  policies: tuple[str, ...] = TOPOLOGY_POLICIES, options: int = 2) -> Doc:
    cfg: Doc = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                "cpuManagerPolicy": "static"}
    gates: dict[str, bool] = {"PodLevelResourceManagers": rng.random() < 0.9}
    cpus = info.get("online") or list(range(info["cpus"]))
    if rng.random() < 0.5 and len(cpus) > 1:
        cfg["reservedSystemCPUs"] = ",".join(str(c) for c in sorted(rng.sample(cpus, rng.choice((1, 1, 2)) if len(cpus) > 3 else 1)))
    else:
        cfg["kubeReserved"] = {"cpu": rng.choice(("1", "500m", "2")) if len(cpus) > 2 else "500m"}
    opts: dict[str, str] = {}
    for o in rng.sample(_FOCUS_OPTIONS, rng.randint(0, options)):
        if any(frozenset({o, p}) in _EXCLUSIVE for p in opts):
            continue
        opts[o] = "true"
    if opts:
        cfg["cpuManagerPolicyOptions"] = opts
    if "align-by-socket" in opts or "distribute-cpus-across-cores" in opts:
        gates["CPUManagerPolicyAlphaOptions"] = True
    policy = rng.choice(policies)
    if "align-by-socket" in opts and policy == "single-numa-node" and rng.random() < 0.8:
        policy = "restricted"
    cfg["topologyManagerPolicy"] = policy
    cfg["topologyManagerScope"] = "pod" if rng.random() < scope_pod else "container"
    topts: dict[str, str] = {}
    if rng.random() < 0.3:
        topts["prefer-closest-numa-nodes"] = "true"
    if len(info["numa"]) > 8:
        topts["max-allowable-numa-nodes"] = str(len(info["numa"]) + rng.choice((0, 2)))
    if topts:
        cfg["topologyManagerPolicyOptions"] = topts
    if rng.random() < 0.25:
        # systemReserved too (cpu only where reservedSystemCPUs does not
        # override it)
        cfg["systemReserved"] = {"memory": rng.choice(("100Mi", "256Mi"))}
        if "reservedSystemCPUs" not in cfg and len(cpus) > 3 and rng.random() < 0.5:
            cfg["systemReserved"]["cpu"] = rng.choice(("500m", "1"))
    if rng.random() < mem_static:
        cfg["memoryManagerPolicy"] = "Static"
        kube_mi = rng.choice((256, 412, 924))
        cfg.setdefault("kubeReserved", {})["memory"] = _qty_mi(kube_mi)
        system_mi = int(str(cfg.get("systemReserved", {}).get("memory", "0Mi")).removesuffix("Mi"))
        total = (kube_mi + system_mi) * MI
        if rng.random() < 0.3:
            # a percentage threshold: the kubelet takes it of the node's
            # memory capacity (a float32 percentage, as its eviction parser)
            pct = rng.choice(("1%", "2.5%", "0.5%"))
            value = struct.unpack("f", struct.pack("f", float(pct[:-1])))[0]
            frac = struct.unpack("f", struct.pack("f", value / 100))[0]
            cfg["evictionHard"] = {"memory.available": pct}
            total += int(float(info["mem"] * len(info["numa"])) * frac)
        else:
            cfg["evictionHard"] = {"memory.available": "100Mi"}
            total += 100 * MI

        def qty(n: int) -> str:
            return _qty_mi(n // MI) if n % MI == 0 else str(n)

        numa = info["numa"]
        if len(numa) > 1 and rng.random() < 0.4:
            first = total // 2 if rng.random() < 0.5 else total // 2 // MI * MI
            cfg["reservedMemory"] = [
                {"numaNode": numa[0], "limits": {"memory": qty(first)}},
                {"numaNode": numa[-1], "limits": {"memory": qty(total - first)}},
            ]
        else:
            cfg["reservedMemory"] = [{"numaNode": rng.choice(numa), "limits": {"memory": qty(total)}}]
    if rng.random() < 0.1:
        # the none CPU policy: the memory manager alone pins pod-level pods
        cfg["cpuManagerPolicy"] = "none"
        cfg.pop("cpuManagerPolicyOptions", None)
    cfg["featureGates"] = gates
    return cfg


def _many_numa_machine(rng: random.Random) -> tuple[Doc, dict[str, Any]]:
    """4 to 10 NUMA nodes, few cores each (more than 8 only with the
    ``max-allowable-numa-nodes`` option the config then sets)."""
    sockets, per_socket = rng.choice(((1, 4), (2, 2), (4, 1), (2, 3), (1, 6), (2, 4), (4, 2), (8, 1), (1, 8), (2, 5), (3, 3)))
    numa = sockets * per_socket
    threads = rng.choice((1, 2, 2))
    cores = rng.randint(1, 3 if threads == 2 else 4)
    syn: Doc = {"sockets": sockets, "numaNodesPerSocket": per_socket, "coresPerNumaNode": cores, "threadsPerCore": threads,
                "memoryPerNumaNode": rng.choice(("2Gi", "4Gi"))}
    if rng.random() < 0.6:
        syn["distances"] = _distances(rng, list(range(numa)), per_socket)
    hp: dict[str, str] = {}
    if rng.random() < 0.3:
        hp["hugepages-2Mi"] = "256Mi"
        syn["hugepagesPerNumaNode"] = hp
    info = {"numa": list(range(numa)), "cpus": numa * cores * threads, "threads": threads, "sockets": sockets,
            "mem": int(syn["memoryPerNumaNode"][:-2]) * GI, "hugepages": hp}
    return {"synthetic": syn}, info


def _big_machine(rng: random.Random) -> tuple[Doc, dict[str, Any]]:
    """32 to 128 logical CPUs on 1-4 NUMA nodes, uncore caches of 2-8
    cores: room for the CPU pickers' topology walks."""
    sockets, per_socket = rng.choice(((1, 1), (1, 2), (2, 1), (2, 2), (1, 4), (4, 1)))
    numa = sockets * per_socket
    threads = rng.choice((1, 2, 2))
    cores = rng.choice((8, 12, 16)) if numa <= 2 else rng.choice((4, 8, 16))
    cores = min(cores, 128 // (numa * threads))
    syn: Doc = {"sockets": sockets, "numaNodesPerSocket": per_socket, "coresPerNumaNode": cores, "threadsPerCore": threads,
                "memoryPerNumaNode": "32Gi"}
    if rng.random() < 0.7:
        syn["coresPerUncoreCache"] = rng.choice([d for d in (2, 4, 8) if cores % d == 0 and d < cores] or [1])
    if numa > 1 and rng.random() < 0.5:
        syn["distances"] = _distances(rng, list(range(numa)), per_socket)
    info = {"numa": list(range(numa)), "cpus": numa * cores * threads, "threads": threads, "sockets": sockets,
            "mem": 32 * GI, "hugepages": {}}
    return {"synthetic": syn}, info


def _big_pod(rng: random.Random, name: str, info: Mapping[str, Any], devices: Mapping[str, list[Doc]]) -> Doc:
    """A Guaranteed pod of 1-3 containers of 1-24 CPUs (pod-level now and
    then)."""
    if rng.random() < 0.3:
        return _rich_pod_level_pod(rng, name, info, devices, big=True)
    containers = []
    for i in range(rng.randint(1, 3)):
        cpu = rng.choice((1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24))
        containers.append({"name": f"c{i}", "resources": {"limits": {"cpu": str(cpu), "memory": "256Mi"}}})
    return {"metadata": {"name": name, "namespace": "big", "uid": f"uid-{name}"}, "spec": {"containers": containers}}


def _focused_machine(rng: random.Random) -> tuple[Doc, dict[str, Any]]:
    if rng.random() < 0.2:
        return _machine_info(rng)
    node, info = _synthetic(rng)
    syn = node["synthetic"]
    # uncore caches more often than in the general scenarios
    if "coresPerUncoreCache" not in syn and syn["coresPerNumaNode"] > 1 and rng.random() < 0.4:
        syn["coresPerUncoreCache"] = rng.choice([d for d in range(1, syn["coresPerNumaNode"]) if syn["coresPerNumaNode"] % d == 0])
    return node, info


def _focused_scenario(seed: int, index: int, workdir: Path, oracle: str | None) -> Doc | None:
    rng = random.Random(f"focus:{seed}:{index}")
    if rng.random() >= FOCUS_SHARE:
        return None
    kind = rng.choice(FOCUS_KINDS)
    devices: dict[str, list[Doc]] = {}
    share, big = 0.7, False
    if kind == "plr-static-memory":
        node, info = _focused_machine(rng)
        cfg = _focus_config(rng, info, mem_static=0.9, scope_pod=0.75)
    elif kind == "many-numa":
        node, info = _many_numa_machine(rng)
        policies = ("single-numa-node",) * 3 + ("restricted", "best-effort")
        cfg = _focus_config(rng, info, mem_static=0.35 if len(info["numa"]) <= 8 else 0.0, scope_pod=0.75,
                            policies=policies, options=1)
        share, big = 0.5, True
    elif kind == "cpu-options-plr":
        node, info = _focused_machine(rng)
        cfg = _focus_config(rng, info, mem_static=0.4, scope_pod=0.7, options=3)
        big = True
    elif kind == "churn":
        node, info = _focused_machine(rng)
        cfg = _focus_config(rng, info, mem_static=0.5, scope_pod=0.5, options=2)
        share = 0.4
    elif kind == "big-machine":
        node, info = _big_machine(rng)
        cfg = _focus_config(rng, info, mem_static=0.15, scope_pod=0.5, options=3)
        share = 2.0
    elif kind == "memory-span":
        node, info = _focused_machine(rng)
        cfg = _focus_config(rng, info, mem_static=1.0, scope_pod=0.5, options=1)
        share = -1.0
    else:
        node, info = _focused_machine(rng)
        cfg = _focus_config(rng, info, mem_static=0.5, scope_pod=0.6)
    node["name"] = f"gen-{seed}-{index}"
    plr_off = {"PodLevelResources": False, "PodLevelResourcesFixDefaulting": False,
               "PodLevelResourcesFixKubeletQOSClass": False, "InPlacePodLevelResourcesVerticalScaling": False}
    api_server: Doc | None = None
    r = rng.random()
    if r < 0.08:
        # a kubelet with pod-level resources off behind an API server that
        # keeps them: such pods are allocated, then refused by the kubelet's
        # pod features check
        cfg["featureGates"] = {k: v for k, v in cfg["featureGates"].items() if k != "PodLevelResourceManagers"} | plr_off
        api_server = {} if rng.random() < 0.5 else {"featureGates": {"PodLevelResourceManagers": True}}
    elif r < 0.12:
        # the API server drops spec.resources before the kubelet sees it
        api_server = {"featureGates": dict(plr_off)}
    if len(info["numa"]) <= 4 and rng.random() < 0.25:
        devices = _devices(rng, info["numa"], cfg["topologyManagerPolicy"])
        node["devices"] = devices
    doc: Doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": node, "kubeletConfig": cfg}
    if api_server is not None:
        doc["apiServer"] = api_server
    steps: list[Doc] = []
    running: list[Doc] = []
    if kind == "restore-remove" or rng.random() < 0.1:
        running = _focus_previous_life(doc, rng, info, devices, share, big, workdir)
        _legacy_formats(doc, rng, oracle)
        _running_specs(doc, rng, running)
        rng.shuffle(running)
        for pod in running:
            r = rng.random()
            if r < 0.35:
                steps.append({"addPod": pod})
            elif r < 0.7:
                steps.append({"removePod": pod["metadata"]["uid"]})
            elif r < 0.85:
                names = [c["name"] for c in pod["spec"].get("initContainers", [])] + [c["name"] for c in pod["spec"]["containers"]]
                steps.append({"removeContainer": {"pod": pod["metadata"]["uid"], "container": rng.choice(names)}})
    n = rng.randint(12, 30) if kind in ("churn", "big-machine") else rng.randint(2, 8)
    steps += _focus_steps(rng, info, devices, "p", n, share, big, running, remove=0.3 if kind in ("churn", "big-machine") else 0.15)
    doc["steps"] = steps
    checked = _drop_invalid_steps(doc, workdir)
    if checked is None:
        doc["steps"] = [{"addPod": _classic_pod(rng, "fallback", info, {})}]
        return doc
    return checked


def _focus_previous_life(doc: Doc, rng: random.Random, info: Mapping[str, Any], devices: Mapping[str, list[Doc]],
                         share: float, big: bool, workdir: Path) -> list[Doc]:
    """As :func:`_state_from_previous_life`, with the focused pods and more
    of them."""

    prev = copy.deepcopy(doc)
    prev.pop("state", None)
    prev["steps"] = [{"addPod": _focus_pod(rng, f"old{i}", info, devices, share, big)} for i in range(rng.randint(1, 5))]
    checked = _drop_invalid_steps(prev, workdir)
    if checked is None:
        return []
    return _started_from(doc, checked, workdir, devices)


def scenario(seed: int, index: int, workdir: Path, oracle: str | None = None, *, focus: bool = True) -> Doc:
    """The ``index``-th random scenario of ``seed`` (deterministic).
    ``oracle``: the kubelet-oracle binary, which writes the starting
    checkpoints in older format versions (without it they stay in the
    current one). ``focus=False``: never a focused scenario (what the
    generator gave before they were added, for every index)."""
    focused = _focused_scenario(seed, index, workdir, oracle) if focus else None
    if focused is not None:
        return focused
    rng = random.Random(f"{seed}:{index}")
    node, info = _machine_info(rng) if rng.random() < 0.25 else _synthetic(rng)
    cfg, facts = _kubelet_config(rng, info)
    node["name"] = f"gen-{seed}-{index}"
    devices: dict[str, list[Doc]] = {}
    if rng.random() < 0.3:
        devices = _devices(rng, info["numa"], facts["policy"])
        node["devices"] = devices
    doc: Doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": node, "kubeletConfig": cfg}
    steps: list[Doc] = []
    invalid = _maybe_invalid_config(rng, cfg, info, facts)
    if rng.random() < 0.2:
        running = _state_from_previous_life(doc, rng, info, devices, facts, workdir)
        _legacy_formats(doc, rng, oracle)
        _running_specs(doc, rng, running)
        for pod in running:
            r = rng.random()
            if r < 0.5:
                steps.append({"addPod": pod})  # re-admission after the restart
            elif r < 0.75:
                steps.append({"removePod": pod["metadata"]["uid"]})
    steps += _steps(rng, info, devices, facts, "p", rng.randint(1, 7))
    _reconcile_passes(rng, steps)
    doc["steps"] = steps
    if invalid:
        return doc  # the kubelet refuses to start: the steps never run
    checked = _drop_invalid_steps(doc, workdir)
    if checked is None:
        doc["steps"] = [{"addPod": _classic_pod(rng, "fallback", info, {})}]
        return doc
    return podgen.with_invalid_pod(checked, seed, index)


def scenarios(
    seed: int, count: int, workdir: Path, start: int = 0, oracle: str | None = None
) -> list[tuple[str, Doc]]:
    return [(f"seed{seed}-{i}", scenario(seed, i, workdir, oracle)) for i in range(start, start + count)]

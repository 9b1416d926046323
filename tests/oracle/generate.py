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
    from tests.oracle.harness import run_podnuma, write_scenario

    prev = copy.deepcopy(doc)
    prev.pop("state", None)
    prev["steps"] = [s for s in _steps(rng, info, devices, facts, "old", rng.randint(1, 4)) if "addPod" in s]
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
    running = [s["addPod"] for s, r in zip(prev["steps"], out.doc["steps"], strict=True) if r.get("admitted")]
    return running


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


def scenario(seed: int, index: int, workdir: Path, oracle: str | None = None) -> Doc:
    """The ``index``-th random scenario of ``seed`` (deterministic).
    ``oracle``: the kubelet-oracle binary, which writes the starting
    checkpoints in older format versions (without it they stay in the
    current one)."""
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

"""``podnuma fleet generate``: a synthetic but realistic fleet, as cluster dumps.

Writes what a platform engineer would collect from a real cluster, so
``podnuma fleet analyze DIR`` reads it like real input:

* ``nodes.json`` - ``kubectl get nodes -o json``: instance-type, zone and
  role labels, capacity/allocatable, nodeInfo;
* ``pods/pods-NNNN.json`` - ``kubectl get pods -A -o json``, one file per
  group of nodes (as ``--field-selector spec.nodeName=`` dumps would be),
  or one ``pods/pods.json`` for the whole fleet (``nodes_per_pods_file=0``:
  the one dump of a cluster, written as it is made);
* ``configz/NODE.json`` - the configz of every CPU-pinned node
  (``{"kubeletconfig": {...}}``, kubelet v1.37: apiVersion and kind set);
* ``noderesourcetopologies.json`` - NodeResourceTopology v1alpha2 objects
  for the large nodes (as an RTE/NFD topology-updater publishes them);
* ``fleet.yaml`` - a ``FleetConfig``: the kubelet configuration of the
  general-purpose node group, and a node form per instance type for the
  nodes without an NRT.

Node shapes: 1-socket 32-CPU, 2-socket 64-CPU and 2-socket 128-CPU nodes
(2 threads per core). Workloads: DaemonSets on every node (node exporter,
log collector, CNI agent), Deployments and StatefulSets with sidecars
(service-mesh proxies, log shippers, metrics exporters as restartable init
containers, some Guaranteed with whole CPUs), a pod-level (KEP-5526) pod,
Burstable and BestEffort pods. A node's pods are placed as a scheduler
would (their requests fit allocatable, exclusive CPUs stay within half the
node), with start times in placement order. Deterministic for a seed.
"""

from __future__ import annotations

import contextlib
import json
import random
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from podnuma.fileio import atomic_file, atomic_write
from podnuma.render.yaml_text import dump_safe_yaml

__all__ = ["generate_fleet", "NODES_PER_POD_FILE", "SHAPES", "GeneratedFleet"]

NODES_PER_POD_FILE = 100
_GI = 1 << 30
_MI = 1 << 20


@dataclass(frozen=True)
class Shape:
    instance_type: str
    sockets: int
    cores_per_numa: int
    memory_per_numa_gi: int
    weight: int

    @property
    def cpus(self) -> int:
        return self.sockets * self.cores_per_numa * 2


SHAPES = (
    Shape("c6i.8xlarge", 1, 16, 64, 5),
    Shape("m6i.16xlarge", 2, 16, 128, 4),
    Shape("r6i.32xlarge", 2, 32, 512, 1),
)

_RESERVED_MEMORY_MI = 1024 + 1024 + 100  # kubeReserved + systemReserved + evictionHard


def _pinned_config(shape: Shape) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "memoryManagerPolicy": "Static",
        "topologyManagerPolicy": "restricted" if shape.sockets > 1 else "best-effort",
        "topologyManagerScope": "container",
        "kubeReserved": {"cpu": "1", "memory": "1Gi"},
        "systemReserved": {"cpu": "1", "memory": "1Gi"},
        "evictionHard": {"memory.available": "100Mi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": f"{_RESERVED_MEMORY_MI}Mi"}}],
        "maxPods": 110,
        "podPidsLimit": 4096,
        "serializeImagePulls": False,
    }
    return cfg


GENERAL_CONFIG: dict[str, Any] = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "kind": "KubeletConfiguration",
    "cpuManagerPolicy": "none",
    "kubeReserved": {"cpu": "500m", "memory": "1Gi"},
    "systemReserved": {"cpu": "500m", "memory": "1Gi"},
    "evictionHard": {"memory.available": "100Mi"},
}


def _res(cpu: str | None, memory: str | None, *, limits: bool = True) -> dict[str, Any]:
    req: dict[str, str] = {}
    if cpu is not None:
        req["cpu"] = cpu
    if memory is not None:
        req["memory"] = memory
    if not req:
        return {}
    return {"requests": dict(req), "limits": dict(req)} if limits else {"requests": req}


def _ctr(name: str, image: str, res: dict[str, Any], *, sidecar: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": res,
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if sidecar:
        c["restartPolicy"] = "Always"
    return c


@dataclass(frozen=True)
class Workload:
    namespace: str
    name: str
    kind: str  # Deployment / StatefulSet / DaemonSet
    make: Callable[[], dict[str, Any]]  # -> spec (containers, initContainers, resources)
    exclusive_cpus: int  # whole CPUs pinned as written
    cpu_milli: int  # the pod's CPU request
    memory: int  # bytes
    weight: int
    min_cpus: int = 0  # only on nodes with at least this many CPUs


def _proxy() -> dict[str, Any]:
    return _ctr("istio-proxy", "docker.io/istio/proxyv2:1.27.1", _res("1", "512Mi"), sidecar=True)


WORKLOADS: tuple[Workload, ...] = (
    Workload("payments", "api", "Deployment", lambda: {
        "initContainers": [_proxy()],
        "containers": [_ctr("api", "registry.example.com/payments/api:3.4.1", _res("4", "8Gi"))],
    }, 5, 5000, 8 * _GI + 512 * _MI, 6),
    Workload("search", "indexer", "StatefulSet", lambda: {
        "initContainers": [
            _ctr("log-shipper", "cr.fluentbit.io/fluent/fluent-bit:4.0", _res("1", "256Mi"), sidecar=True),
            _ctr("metrics", "quay.io/prometheus/statsd-exporter:v0.28.0", _res("1", "256Mi"), sidecar=True),
        ],
        "containers": [_ctr("indexer", "registry.example.com/search/indexer:7.2", _res("8", "32Gi"))],
    }, 10, 10000, 32 * _GI + 512 * _MI, 2, 64),
    Workload("trading", "matcher", "Deployment", lambda: {
        "containers": [_ctr("matcher", "registry.example.com/trading/matcher:1.9", _res("2", "4Gi"))],
    }, 2, 2000, 4 * _GI, 4),
    Workload("ml", "trainer", "Deployment", lambda: {
        "initContainers": [
            _ctr("data-loader", "registry.example.com/ml/loader:0.8", _res("2", "4Gi"), sidecar=True),
            _proxy(),
        ],
        "containers": [_ctr("train", "registry.example.com/ml/trainer:2.1", _res("16", "64Gi"))],
    }, 19, 19000, 68 * _GI + 512 * _MI, 1, 128),
    Workload("db", "postgres", "StatefulSet", lambda: {
        "initContainers": [
            _ctr("exporter", "quay.io/prometheuscommunity/postgres-exporter:v0.17.1",
                 _res("1", "256Mi"), sidecar=True),
        ],
        "containers": [_ctr("postgres", "docker.io/library/postgres:17.5", _res("4", "16Gi"))],
    }, 5, 5000, 16 * _GI + 256 * _MI, 2),
    Workload("analytics", "query", "Deployment", lambda: {
        "resources": {"requests": {"cpu": "6", "memory": "12Gi"}, "limits": {"cpu": "6", "memory": "12Gi"}},
        "initContainers": [
            _ctr("log-shipper", "cr.fluentbit.io/fluent/fluent-bit:4.0", {}, sidecar=True),
        ],
        "containers": [_ctr("query", "registry.example.com/analytics/query:5.0", _res("4", "8Gi"))],
    }, 4, 6000, 12 * _GI, 2),
    Workload("web", "frontend", "Deployment", lambda: {
        "initContainers": [_ctr("envoy", "docker.io/envoyproxy/envoy:v1.35.0",
                                _res("100m", "128Mi", limits=False), sidecar=True)],
        "containers": [_ctr("frontend", "registry.example.com/web/frontend:12.0",
                            _res("250m", "512Mi", limits=False))],
    }, 0, 350, 640 * _MI, 20),
    Workload("batch", "worker", "Deployment", lambda: {
        "containers": [_ctr("worker", "registry.example.com/batch/worker:2026.11", {})],
    }, 0, 0, 0, 10),
)

DAEMONSETS: tuple[Workload, ...] = (
    Workload("monitoring", "node-exporter", "DaemonSet", lambda: {
        "containers": [_ctr("node-exporter", "quay.io/prometheus/node-exporter:v1.9.1",
                            _res("100m", "64Mi", limits=False))],
    }, 0, 100, 64 * _MI, 0),
    Workload("logging", "fluent-bit", "DaemonSet", lambda: {
        "containers": [_ctr("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:4.0",
                            _res("200m", "256Mi", limits=False))],
    }, 0, 200, 256 * _MI, 0),
    Workload("kube-system", "cilium", "DaemonSet", lambda: {
        "initContainers": [_ctr("install-cni", "quay.io/cilium/cilium:v1.18.2", _res("10m", "10Mi", limits=False))],
        "containers": [_ctr("cilium-agent", "quay.io/cilium/cilium:v1.18.2", _res("100m", "512Mi", limits=False))],
    }, 0, 100, 512 * _MI, 0),
)


def _suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(seconds: int) -> str:
    base = 1_790_000_000  # 2026-09-21
    import datetime as _dt

    t = _dt.datetime.fromtimestamp(base + seconds, tz=_dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Names:
    rs_hash: dict[str, str]
    sts_ordinal: dict[str, int]


def _qos(spec: Mapping[str, Any]) -> str:
    ctrs = [*spec.get("initContainers", []), *spec.get("containers", [])]
    if "resources" in spec:
        r = spec["resources"]
        return "Guaranteed" if r.get("requests") == r.get("limits") else "Burstable"
    res = [c.get("resources") or {} for c in ctrs]
    if all(not r for r in res):
        return "BestEffort"
    if all(r.get("limits") and r.get("requests") == r.get("limits") and
           set(r["limits"]) >= {"cpu", "memory"} for r in res):
        return "Guaranteed"
    return "Burstable"


def _pod(w: Workload, node: str, rng: random.Random, names: _Names, t: int) -> dict[str, Any]:
    spec_parts = w.make()
    key = f"{w.namespace}/{w.name}"
    labels = {"app.kubernetes.io/name": w.name}
    if w.kind == "Deployment":
        h = names.rs_hash.setdefault(key, _suffix(rng, 10))
        owner: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{w.name}-{h}"}
        name = f"{w.name}-{h}-{_suffix(rng)}"
        labels["pod-template-hash"] = h
    elif w.kind == "StatefulSet":
        i = names.sts_ordinal.get(key, 0)
        names.sts_ordinal[key] = i + 1
        owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": w.name}
        name = f"{w.name}-{i}"
        labels["statefulset.kubernetes.io/pod-name"] = name
    else:
        owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": w.name}
        name = f"{w.name}-{_suffix(rng)}"
    owner.update({"uid": _uid(rng), "controller": True, "blockOwnerDeletion": True})
    spec: dict[str, Any] = {}
    if "resources" in spec_parts:
        spec["resources"] = spec_parts["resources"]
    if spec_parts.get("initContainers"):
        spec["initContainers"] = spec_parts["initContainers"]
    spec["containers"] = spec_parts["containers"]
    spec.update({
        "nodeName": node,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "effect": "NoExecute", "tolerationSeconds": 300}],
    })
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": w.namespace,
            "uid": _uid(rng),
            "resourceVersion": str(100000 + t),
            "creationTimestamp": _ts(t - 5),
            "labels": labels,
            "ownerReferences": [owner],
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "qosClass": _qos(spec),
            "startTime": _ts(t),
            "hostIP": "10.0.0.1",
            "podIP": f"10.{rng.randrange(1, 255)}.{rng.randrange(0, 255)}.{rng.randrange(1, 255)}",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": _ts(t + 3)}],
        },
    }


def _node_obj(name: str, shape: Shape, pool: str, zone: str) -> dict[str, Any]:
    mem_ki = shape.sockets * shape.memory_per_numa_gi * _GI // 1024
    pinned = pool == "pinned"
    res_cpu_milli = 2000 if pinned else 1000
    alloc_mem_ki = mem_ki - (2 * _GI + 100 * _MI) // 1024
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": shape.instance_type,
                "topology.kubernetes.io/zone": zone,
                "example.com/node-pool": pool,
                "feature.node.kubernetes.io/cpu-hardware_multithreading": "true",
            },
        },
        "spec": {"providerID": f"aws:///{zone}/i-{uuid.uuid5(uuid.NAMESPACE_DNS, name).hex[:17]}"},
        "status": {
            "capacity": {"cpu": str(shape.cpus), "memory": f"{mem_ki}Ki", "pods": "110",
                         "hugepages-2Mi": "0", "hugepages-1Gi": "0"},
            "allocatable": {"cpu": f"{shape.cpus * 1000 - res_cpu_milli}m", "memory": f"{alloc_mem_ki}Ki",
                            "pods": "110", "hugepages-2Mi": "0", "hugepages-1Gi": "0"},
            "nodeInfo": {"kubeletVersion": "v1.37.2", "kernelVersion": "6.12.48",
                         "architecture": "amd64", "operatingSystem": "linux",
                         "containerRuntimeVersion": "containerd://2.1.4"},
        },
    }


def _synthetic_form(shape: Shape) -> dict[str, Any]:
    return {"synthetic": {"sockets": shape.sockets, "numaNodesPerSocket": 1,
                          "coresPerNumaNode": shape.cores_per_numa, "threadsPerCore": 2,
                          "memoryPerNumaNode": f"{shape.memory_per_numa_gi}Gi"}}


def _nrt(name: str, shape: Shape) -> dict[str, Any]:
    zones = []
    n = shape.sockets
    per_cpu = shape.cores_per_numa * 2
    for z in range(n):
        zones.append({
            "name": f"node-{z}",
            "type": "Node",
            "costs": [{"name": f"node-{o}", "value": 10 if o == z else 21} for o in range(n)],
            "resources": [
                {"name": "cpu", "capacity": str(per_cpu), "allocatable": str(per_cpu - (2 if z == 0 else 0)),
                 "available": str(per_cpu - (2 if z == 0 else 0))},
                {"name": "memory", "capacity": str(shape.memory_per_numa_gi * _GI),
                 "allocatable": str(shape.memory_per_numa_gi * _GI - (_RESERVED_MEMORY_MI * _MI if z == 0 else 0)),
                 "available": str(shape.memory_per_numa_gi * _GI - (_RESERVED_MEMORY_MI * _MI if z == 0 else 0))},
            ],
        })
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name, "ownerReferences": []},
        "topologyPolicies": ["Restricted"],
        "attributes": [{"name": "topologyManagerPolicy", "value": "restricted"},
                       {"name": "topologyManagerScope", "value": "container"}],
        "zones": zones,
    }


@dataclass(frozen=True)
class GeneratedFleet:
    directory: Path
    nodes: int
    pods: int
    files: int


def _dump(path: Path, obj: Any) -> None:
    atomic_write(path, (json.dumps(obj, indent=2) + "\n").encode(), mode=0o644)


_LIST_HEAD = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}


class _OnePodsFile:
    """The pods of every node in one dump, ``pods/pods.json`` (what
    ``kubectl get pods -A -o json`` gives for a whole cluster), written as
    they are made (a batch of nodes at a time: the fleet's pods are never
    all in memory), atomically: the same bytes as the whole list written
    at once by :func:`_dump`."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.first = True
        text = json.dumps({**_LIST_HEAD, "items": ["\0"]}, indent=2)
        self.head, self.tail = text.split('"\\u0000"')
        self.empty = json.dumps({**_LIST_HEAD, "items": []}, indent=2)

    def add(self, items: list[dict[str, Any]]) -> None:
        if not items:
            return
        text = ",\n    ".join(json.dumps(p, indent=2).replace("\n", "\n    ") for p in items)
        self.fh.write(((self.head if self.first else ",\n    ") + text).encode())
        self.first = False

    def close(self) -> None:
        self.fh.write(((self.empty if self.first else self.tail) + "\n").encode())


def generate_fleet(
    out: Path, *, nodes: int, pods_per_node: int, seed: int = 0,
    progress: Callable[[int], None] | None = None, nodes_per_pods_file: int = NODES_PER_POD_FILE,
) -> GeneratedFleet:
    """Write a fleet of ``nodes`` nodes with ``pods_per_node`` pods each
    (DaemonSet pods included) into directory ``out``: the pods of
    ``nodes_per_pods_file`` nodes a dump (``pods/pods-NNNN.json``), or,
    with 0, all in one (``pods/pods.json``)."""
    with contextlib.ExitStack() as stack:
        one = None
        if nodes_per_pods_file <= 0:
            (out / "pods").mkdir(parents=True, exist_ok=True)
            one = _OnePodsFile(stack.enter_context(atomic_file(out / "pods" / "pods.json", mode=0o644)))
        g = _generate(out, nodes=nodes, pods_per_node=pods_per_node, seed=seed, progress=progress,
                      per_file=nodes_per_pods_file if one is None else NODES_PER_POD_FILE, one=one)
        if one is not None:
            one.close()
        return g


def _generate(
    out: Path, *, nodes: int, pods_per_node: int, seed: int, progress: Callable[[int], None] | None,
    per_file: int, one: _OnePodsFile | None,
) -> GeneratedFleet:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pods").mkdir(exist_ok=True)
    (out / "configz").mkdir(exist_ok=True)
    names = _Names({}, {})
    node_objs: list[dict[str, Any]] = []
    nrts: list[dict[str, Any]] = []
    shapes = [s for s in SHAPES for _ in range(s.weight)]
    zones = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
    shard: list[dict[str, Any]] = []
    shard_index = 0
    total_pods = 0
    files = 0
    t = 0
    for i in range(nodes):
        shape = rng.choice(shapes)
        pool = "general" if rng.random() < 0.25 else "pinned"
        name = f"ip-10-{i // 65536 % 256}-{i // 256 % 256}-{i % 256}.eu-west-1.compute.internal"
        node_objs.append(_node_obj(name, shape, pool, zones[i % 3]))
        if pool == "pinned":
            _dump(out / "configz" / f"{name}.json", {"kubeletconfig": _pinned_config(shape)})
            files += 1
            if shape.cores_per_numa >= 32:
                nrts.append(_nrt(name, shape))
        # Place pods: DaemonSets first, then workloads while they fit.
        cpu_left = shape.cpus * 1000 - 2000
        mem_left = shape.sockets * shape.memory_per_numa_gi * _GI - 3 * _GI
        excl_left = shape.cpus // 2 if pool == "pinned" else shape.cpus
        placed = 0
        for w in DAEMONSETS:
            if placed >= pods_per_node:
                break
            t += 1
            shard.append(_pod(w, name, rng, names, t))
            cpu_left -= w.cpu_milli
            mem_left -= w.memory
            placed += 1
        candidates = [w for w in WORKLOADS if shape.cpus >= w.min_cpus]
        weights = [w.weight for w in candidates]
        tries = 0
        while placed < pods_per_node and tries < pods_per_node * 20:
            tries += 1
            w = rng.choices(candidates, weights)[0]
            if w.cpu_milli > cpu_left or w.memory > mem_left or w.exclusive_cpus > excl_left:
                continue
            t += 1
            shard.append(_pod(w, name, rng, names, t))
            cpu_left -= w.cpu_milli
            mem_left -= w.memory
            excl_left -= w.exclusive_cpus
            placed += 1
        total_pods += placed
        if (i + 1) % per_file == 0 or i == nodes - 1:
            if one is not None:
                one.add(shard)
                files += shard_index == 0
            else:
                _dump(out / "pods" / f"pods-{shard_index:04d}.json", {**_LIST_HEAD, "items": shard})
                files += 1
            shard, shard_index = [], shard_index + 1
        if progress is not None:
            progress(1)
    _dump(out / "nodes.json", {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                               "items": node_objs})
    _dump(out / "noderesourcetopologies.json",
          {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": nrts})
    fleet_cfg = {
        "apiVersion": "podnuma.io/v1",
        "kind": "FleetConfig",
        "nodeGroups": [
            {"name": "general", "selector": "example.com/node-pool=general",
             "kubeletConfig": GENERAL_CONFIG},
            *({"name": s.instance_type, "selector": f"node.kubernetes.io/instance-type={s.instance_type}",
               "node": _synthetic_form(s)} for s in SHAPES),
        ],
    }
    atomic_write(out / "fleet.yaml", dump_safe_yaml(fleet_cfg).encode(), mode=0o644)
    files += 3
    return GeneratedFleet(directory=out, nodes=nodes, pods=total_pods, files=files)

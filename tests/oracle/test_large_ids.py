"""Machines with large, sparse socket and uncore-cache (L3) ids, replayed by
podnuma and by the kubelet's own code (``kubelet-oracle``).

cadvisor reads socket and L3 ids from sysfs (``physical_package_id``,
``cache/index3/id``) as Go ``int``s, and the kubelet keeps them in maps and
``cpuset.CPUSet``s: only their order and equality matter. podnuma keys its
socket and uncore-cache tables by bit position, and ranks such ids (the
tables would otherwise be masks as wide as the ids: a socket id of 2^40 is a
128 GiB integer). The answers (CPUs, NUMA nodes, messages, checkpoint bytes)
must be the kubelet's whatever the ids are:

- a matrix of hand-made machines (``cpus`` table) whose ids are small,
  sparse and large, large and in reverse order, or Go's ``int`` extremes,
  under the CPU manager options that walk sockets and uncore caches;
- seeded random ``machineInfo`` scenarios of the differential generator,
  their socket and uncore ids mapped to large ones (order kept, or shuffled);
- ``sysfs`` trees with such ids, and an L3 id out of Go's ``int`` (cadvisor
  drops the node's cache information, as podnuma does);
- NUMA ids from 64 (bits past the kubelet's 64-bit hint masks): the kubelet
  panics where it builds a hint mask from them, and podnuma reports that
  panic (``KubeletPanic``) in the same places.

``PODNUMA_ORACLE_SEED`` / ``PODNUMA_LARGE_IDS_COUNT`` set the random part
(default: the day's seed, 40 machineInfo scenarios).
"""

from __future__ import annotations

import copy
import os
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.oracle import generate
from tests.oracle.harness import compare, random_settings, run_both, run_oracle, run_podnuma

HEADER = {"apiVersion": "podnuma.io/v1", "kind": "Scenario"}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

SEED, _ = random_settings()
COUNT = int(os.environ.get("PODNUMA_LARGE_IDS_COUNT") or 40)

#: socket ids of the four sockets of the matrix machines (CPUs 0-7, 8-15, ...)
SOCKET_IDS: dict[str, tuple[int, int, int, int]] = {
    "dense": (0, 1, 2, 3),
    "sparse-1e6": (0, 1_000_000, 2_000_000, 3_000_000),
    "2p31": (0, 1, 2**31, 2**31 + 1),
    "1e9-reversed": (3 * 10**9, 2 * 10**9, 10**9, 7),
    "int64-extremes": (INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1),
    "minus-one-and-2p40": (2**40, -1, 2**40 + 5, 0),
}
#: uncore-cache ids of the eight L3 caches (four CPUs each)
UNCORE_IDS: dict[str, tuple[int, ...] | None] = {
    "socket": None,  # no L3 of their own: the kubelet uses the socket id
    "dense": (0, 1, 2, 3, 4, 5, 6, 7),
    "2p31-shuffled": (2**31 + 3, 5, 2**31, 9, 2**31 + 1, 2**31 + 7, 1, 0),
    "int64-extremes": (INT64_MIN, INT64_MAX, -5, 10**18, INT64_MAX - 1, 0, INT64_MIN + 1, 2**62),
}
#: (topology policy, CPU manager policy options)
POLICIES: dict[str, tuple[str, dict[str, str]]] = {
    "none": ("none", {}),
    "best-effort": ("best-effort", {}),
    "align-by-socket": ("restricted", {"align-by-socket": "true"}),
    "uncore": ("none", {"prefer-align-cpus-by-uncorecache": "true"}),
    "distribute-numa": ("single-numa-node", {"distribute-cpus-across-numa": "true"}),
    "full-pcpus": ("best-effort", {"full-pcpus-only": "true"}),
}


def _pod(name: str, cpu: str, memory: str = "256Mi", init_cpu: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpu, "memory": memory}}}]}
    if init_cpu is not None:
        spec["initContainers"] = [{"name": "init", "resources": {"limits": {"cpu": init_cpu, "memory": memory}}}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ids", "uid": f"{name:0>8}-0000-4000-8000-000000000000"},
            "spec": spec}


def _matrix_machine(sockets: tuple[int, ...], uncores: tuple[int, ...] | None) -> dict[str, Any]:
    """32 CPUs: 4 sockets of 4 cores of 2 threads (siblings c and c + 16,
    as Linux numbers them), 2 NUMA nodes per socket and an L3 per NUMA node
    (2 cores)."""
    rows = []
    for cpu in range(32):
        first = cpu % 16  # the core's first thread
        row: dict[str, Any] = {"id": cpu, "core": first % 4, "socket": sockets[first // 4],
                               "numaNode": first // 2}
        if uncores is not None:
            row["uncoreCache"] = uncores[first // 2]
        rows.append(row)
    return {"name": "large-ids", "cpus": rows, "memory": {n: {"memory": "4Gi"} for n in range(8)}}


def _config(topology: str, options: dict[str, str]) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static", "reservedSystemCPUs": "0,16", "topologyManagerPolicy": topology,
        "featureGates": {"CPUManagerPolicyAlphaOptions": True, "CPUManagerPolicyBetaOptions": True},
    }
    if options:
        cfg["cpuManagerPolicyOptions"] = options
    return cfg


def _matrix_steps() -> list[dict[str, Any]]:
    pods = [_pod("a", "2"), _pod("b", "6"), _pod("c", "12", init_cpu="4"), _pod("d", "3"),
            _pod("e", "4"), _pod("f", "2")]
    steps: list[dict[str, Any]] = [{"addPod": p} for p in pods]
    steps.insert(4, {"removePod": pods[0]["metadata"]["uid"]})
    return steps


def _matrix() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for sname, sockets in SOCKET_IDS.items():
        for uname, uncores in UNCORE_IDS.items():
            for pname, (topology, options) in POLICIES.items():
                if uname != "socket" and pname not in ("uncore", "none", "align-by-socket"):
                    continue  # the L3 ids matter only to the uncore picker (and to nothing else)
                doc = {**HEADER, "node": _matrix_machine(sockets, uncores),
                       "kubeletConfig": _config(topology, options), "steps": _matrix_steps()}
                out.append((f"{sname}-{uname}-{pname}", doc))
    return out


MATRIX = _matrix()


def _report(mismatches: list[tuple[str, Any, list[str]]]) -> str:
    return "\n".join(f"{name}: " + "; ".join(diffs[:4]) for name, _, diffs in mismatches[:10])


def test_the_matrix_machines(oracle_binary: str, tmp_path: Path) -> None:
    """Every id scheme under every policy: the kubelet's answers, checkpoint
    bytes compared for one scenario in three."""
    stats: dict[str, int] = {}
    mismatches = run_both(oracle_binary, MATRIX, tmp_path, bytes_every=3, stats=stats)
    assert not mismatches, f"{len(mismatches)} of {len(MATRIX)} differ:\n{_report(mismatches)}"
    assert stats["compared"] == len(MATRIX)
    assert stats["bytes"] > 0


def test_the_id_scheme_is_invisible(tmp_path: Path) -> None:
    """On these machines the ids' order is the dense machine's when the
    scheme keeps the order, so podnuma's CPUs are the dense machine's there
    (a check of the test's machines, beside the oracle's)."""
    def cpus(doc: dict[str, Any], name: str) -> list[Any]:
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        out = run_podnuma(path)
        assert out.kind == "ok", out.message
        return [(s["admitted"], [c["cpus"] for c in s["containers"]]) for s in out.doc["steps"]]

    by_name = dict(MATRIX)
    for pname in POLICIES:
        dense = cpus(by_name[f"dense-socket-{pname}"], "dense")
        for scheme in ("sparse-1e6", "2p31"):
            assert cpus(by_name[f"{scheme}-socket-{pname}"], scheme) == dense, (scheme, pname)


# -- seeded random machineInfo scenarios, their ids made large -------------------------------


def _large_ids(rng: random.Random, count: int, keep_order: bool) -> list[int]:
    """``count`` distinct large ids (negative ones and Go's int extremes
    among them), ascending when ``keep_order``."""
    pool = {INT64_MIN, INT64_MAX, -1, 2**31, 2**40, 10**9}
    while len(pool) < count + 6:
        pool.add(rng.choice((rng.randint(INT64_MIN, INT64_MAX), rng.randint(-(2**33), 2**33),
                             rng.randint(0, 10**7))))
    ids = rng.sample(sorted(pool), count)
    return sorted(ids) if keep_order else ids


def _remap_machine_info(doc: dict[str, Any], rng: random.Random) -> bool:
    """Socket and uncore-cache ids of a machineInfo node mapped to large
    ones; False when the node is not a machineInfo one."""
    mi = doc["node"].get("machineInfo")
    if not isinstance(mi, dict):
        return False
    cores = [c for n in mi.get("topology", []) for c in n.get("cores", [])]
    sockets = sorted({c["socket_id"] for c in cores})
    uncores = sorted({u["id"] for c in cores for u in c.get("uncore_caches", [])})
    smap = dict(zip(sockets, _large_ids(rng, len(sockets), rng.random() < 0.5), strict=True))
    umap = dict(zip(uncores, _large_ids(rng, len(uncores), rng.random() < 0.5), strict=True))
    for c in cores:
        c["socket_id"] = smap[c["socket_id"]]
        for u in c.get("uncore_caches", []):
            u["id"] = umap[u["id"]]
    return True


def _random_items(workdir: Path, oracle: str) -> list[tuple[str, dict[str, Any]]]:
    items = []
    index = 0
    while len(items) < COUNT and index < COUNT * 40:
        rng = random.Random(f"{SEED}:{index}:large-ids")
        doc = copy.deepcopy(generate.scenario(SEED, index, workdir, oracle))
        if _remap_machine_info(doc, rng):
            items.append((f"seed{SEED}-{index}-large-ids", doc))
        index += 1
    return items


def test_random_machine_info_with_large_ids(oracle_binary: str, tmp_path: Path) -> None:
    print(f"kubelet oracle: seed {SEED}, {COUNT} machineInfo scenarios with large socket and L3 ids")
    items = _random_items(tmp_path, oracle_binary)
    assert items
    mismatches = run_both(oracle_binary, items, tmp_path, bytes_every=4)
    assert not mismatches, f"{len(mismatches)} of {len(items)} differ (seed {SEED}):\n{_report(mismatches)}"


# -- sysfs trees ---------------------------------------------------------------------------


def _sysfs(root: Path, packages: dict[int, int], l3: dict[int, str] | None) -> Path:
    """Two NUMA nodes of 4 CPUs (core id = cpu % 4, one thread per core),
    the given package ids; with ``l3`` an index3 cache per CPU whose ``id``
    file holds the given text (shared by the CPUs with the same text)."""
    cpu_root = root / "devices" / "system" / "cpu"
    for cpu, pkg in packages.items():
        topo = cpu_root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu % 4}\n")
        (topo / "physical_package_id").write_text(f"{pkg}\n")
        if l3 is not None:
            cache = cpu_root / f"cpu{cpu}" / "cache" / "index3"
            cache.mkdir(parents=True)
            sharers = [c for c in packages if l3[c] == l3[cpu]]
            (cache / "id").write_text(l3[cpu] + "\n")
            (cache / "size").write_text("16384K\n")
            (cache / "level").write_text("3\n")
            (cache / "type").write_text("Unified\n")
            (cache / "shared_cpu_map").write_text(f"{sum(1 << c for c in sharers):x}\n")
    (cpu_root / "online").write_text(f"0-{max(packages)}\n")
    for nid in (0, 1):
        nd = root / "devices" / "system" / "node" / f"node{nid}"
        nd.mkdir(parents=True)
        for cpu in range(nid * 4, nid * 4 + 4):
            (nd / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
        (nd / "meminfo").write_text(f"Node {nid} MemTotal:       8388608 kB\n")
        (nd / "distance").write_text("10 20\n" if nid == 0 else "20 10\n")
    return root


SYSFS_CASES: dict[str, tuple[dict[int, int], dict[int, str] | None]] = {
    "packages-2p40": ({c: (2**40 if c < 4 else 0) for c in range(8)}, None),
    "packages-int64-extremes": ({c: (INT64_MAX if c < 4 else INT64_MIN) for c in range(8)}, None),
    "l3-2p31": ({c: c // 4 for c in range(8)}, {c: str(2**31 + (1 - c // 2 % 2)) for c in range(8)}),
    "l3-int64-max": ({c: c // 4 for c in range(8)}, {c: str(INT64_MAX - c // 2) for c in range(8)}),
    # out of Go's int: cadvisor's Sscanf fails and the node keeps no cache
    # information (the kubelet falls back to the socket id)
    "l3-past-int64": ({c: c // 4 for c in range(8)}, {c: str(2**63 + c // 2) for c in range(8)}),
    "l3-a-thousand-digits": ({c: c // 4 for c in range(8)}, {c: "7" * 1000 + str(c // 2) for c in range(8)}),
}


@pytest.mark.parametrize("case", sorted(SYSFS_CASES))
@pytest.mark.parametrize("options", [{}, {"prefer-align-cpus-by-uncorecache": "true"}],
                         ids=["packed", "uncore"])
def test_sysfs_trees(case: str, options: dict[str, str], oracle_binary: str, tmp_path: Path) -> None:
    packages, l3 = SYSFS_CASES[case]
    tree = _sysfs(tmp_path / "sys", packages, l3)
    cfg = _config("none", options)
    cfg["reservedSystemCPUs"] = "0"
    doc = {**HEADER, "node": {"name": "tree", "sysfs": str(tree)}, "kubeletConfig": cfg,
           "steps": [{"addPod": _pod("a", "2")}, {"addPod": _pod("b", "3")}, {"addPod": _pod("c", "2")}]}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "ok", theirs.message
    assert compare(mine, theirs, doc) == []


# -- NUMA ids from 64 ----------------------------------------------------------------------


@pytest.mark.parametrize("numa_ids", [(0, 63), (0, 64), (5, 100), (1, 1023)], ids=lambda t: f"{t[0]}-{t[1]}")
def test_numa_ids_past_the_hint_masks(numa_ids: tuple[int, int], oracle_binary: str, tmp_path: Path) -> None:
    """The kubelet starts (``maxAllowableNUMANodes`` counts nodes, not ids)
    and panics admitting pods wherever it makes a hint mask of a NUMA id
    past 63 (``bitmask.NewBitMask`` refuses it and the mask is nil): under
    every topology policy but none, and under none with the static memory
    manager. podnuma reports those panics; the ``none`` policies admit."""
    items = []
    for topology in ("none", "best-effort", "restricted", "single-numa-node"):
        for cpu, memory in (("static", "None"), ("none", "Static"), ("static", "Static")):
            rows = [{"id": c, "core": c, "socket": 0, "numaNode": numa_ids[c // 4]} for c in range(8)]
            cfg: dict[str, Any] = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                                   "cpuManagerPolicy": cpu, "memoryManagerPolicy": memory,
                                   "topologyManagerPolicy": topology}
            if cpu == "static":
                cfg["reservedSystemCPUs"] = "0"
            if memory == "Static":
                cfg["kubeReserved"] = {"memory": "1000Mi"}
                cfg["evictionHard"] = {"memory.available": "100Mi"}
                cfg["reservedMemory"] = [{"numaNode": numa_ids[0], "limits": {"memory": "1100Mi"}}]
            doc = {**HEADER,
                   "node": {"name": "numa", "cpus": rows, "memory": {n: {"memory": "8Gi"} for n in numa_ids}},
                   "kubeletConfig": cfg,
                   "steps": [{"addPod": _pod("a", "2")}, {"addPod": _pod("b", "1")}, {"addPod": _pod("c", "500m")}]}
            items.append((f"{topology}-{cpu}-{memory}", doc))
    stats: dict[str, int] = {}
    mismatches = run_both(oracle_binary, items, tmp_path, bytes_every=0, stats=stats)
    assert not mismatches, _report(mismatches)
    panics = stats.get("kubelet_panic", 0)
    assert (panics > 0) == (numa_ids[1] >= 64), stats

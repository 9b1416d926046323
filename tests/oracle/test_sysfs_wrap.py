"""Figures of a copy of ``/sys`` past what cadvisor's and the kubelet's
integers hold, against the kubelet (``kubelet-oracle``, which reads the
tree with cadvisor's own ``GetNodesInfo``):

- a ``MemTotal`` of 2^54 kB or more: cadvisor's kB * 1024 wraps its uint64
  and the kubelet gets the wrapped figure (node and machine ``meminfo``);
- ``nr_hugepages`` read as cadvisor reads it (``strings.TrimSpace``, then
  ``fmt.Sscanf("%d")`` into a uint64), and a cache's ``id``/``size``/
  ``level`` scanned with ``fmt.Sscanf`` as they are (a leading newline is
  an error there, which ends cache discovery for the node: the uncore
  cache the CPU manager aligns to is gone); ``shared_cpu_map`` words and
  ``core_id`` trimmed by ``strings.TrimSpace`` and parsed by ``strconv``;
- huge page pools of 2^63 bytes or more, which the kubelet's capacity
  (``int64(...)``) wraps negative; a pool of exactly 2^63 bytes is
  ``math.MinInt64``, which ``Quantity.Sub`` cannot negate, so allocatable
  memory is 0;
- two such pools: the kubelet's allocatable memory depends on the order it
  walks its capacity map (random), so that test accepts either of the
  kubelet's two answers and checks podnuma gives one of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.oracle.harness import compare, run_oracle, run_podnuma

HEADER = {"apiVersion": "podnuma.io/v1", "kind": "Scenario"}
NODE_KB = 8 * 1024 * 1024


def _tree(root: Path, *, node_kb: str = str(NODE_KB), pools: dict[int, str] | None = None,
          machine_kb: str | None = None, cache_ids: dict[int, str] | None = None,
          cache_size: str = "8192K\n", cache_level: str = "3\n", upper_map: str = "c\n",
          core_ids: dict[int, str] | None = None) -> Path:
    """Four CPUs on NUMA node 0 (package 0, one core each); with
    ``cache_ids``, an L3 cache per pair of CPUs (an uncore cache: ids by
    CPU, ``upper_map`` the ``shared_cpu_map`` of CPUs 2 and 3); huge page
    pools by page size in kB (the ``nr_hugepages`` text); ``core_ids``
    replaces ``core_id`` texts. Returns the ``sys`` directory."""
    sys_root = root / "sys"
    cpu_root = sys_root / "devices/system/cpu"
    for cpu in range(4):
        topo = cpu_root / f"cpu{cpu}/topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text((core_ids or {}).get(cpu, f"{cpu}\n"))
        (topo / "physical_package_id").write_text("0\n")
        if cache_ids is not None:
            cache = cpu_root / f"cpu{cpu}/cache/index3"
            cache.mkdir(parents=True)
            (cache / "id").write_text(cache_ids[cpu])
            (cache / "size").write_text(cache_size)
            (cache / "level").write_text(cache_level)
            (cache / "type").write_text("Unified\n")
            (cache / "shared_cpu_map").write_text("3\n" if cpu < 2 else upper_map)
    (cpu_root / "online").write_text("0-3\n")
    node = sys_root / "devices/system/node/node0"
    node.mkdir(parents=True)
    for cpu in range(4):
        (node / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
    (node / "meminfo").write_text(f"Node 0 MemTotal:       {node_kb} kB\nNode 0 MemFree: 1 kB\n")
    (node / "distance").write_text("10\n")
    for kb, text in (pools or {}).items():
        pool = node / f"hugepages/hugepages-{kb}kB"
        pool.mkdir(parents=True)
        (pool / "nr_hugepages").write_text(text)
    if machine_kb is not None:
        (root / "proc").mkdir()
        (root / "proc/meminfo").write_text(f"MemTotal:       {machine_kb} kB\nMemFree: 1 kB\n")
    return sys_root


def _scenario(tmp_path: Path, sys_root: Path, limits: dict[str, str], config: dict[str, Any] | None = None) -> Path:
    doc = {**HEADER, "node": {"name": "worker", "sysfs": str(sys_root)}, "kubeletConfig": config or {},
           "steps": [{"addPod": {"metadata": {"name": "a", "namespace": "x"},
                                 "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]}}}]}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _both(binary: str, path: Path) -> tuple[Any, Any]:
    mine, theirs = run_podnuma(path), run_oracle(binary, [path])[0]
    assert compare(mine, theirs, yaml.safe_load(path.read_text())) == [], (mine.message, theirs.message)
    return mine, theirs


def _step(outcome: Any) -> tuple[Any, ...]:
    step = outcome.doc["steps"][0]
    return step["admitted"], step["reason"], step["message"]


def _cgroups_agree(binary: str, path: Path) -> None:
    from tests.oracle.cgroups_harness import (
        _podnuma_run,
        compare_cgroups,
        plan_oracle,
        plan_podnuma,
    )

    scenario, run, outcome = _podnuma_run(path)
    assert scenario is not None and run is not None, outcome
    for version, driver in ((2, "systemd"), (1, "cgroupfs")):
        theirs = plan_oracle(binary, [path], version, driver)[0]
        assert compare_cgroups(plan_podnuma(scenario, run, None, version, driver), theirs) == []


# ------------------------------------------------------------------ MemTotal


#: (node MemTotal kB, machine MemTotal kB or None, what the kubelet makes of it)
MEMTOTALS = [
    # 2^54 kB wraps to 0 bytes: a capacity below the 100Mi eviction reservation
    (str(1 << 54), None, "startup"),
    # 2^54 kB + 16 GiB wraps to 16 GiB
    (str((1 << 54) + 16 * 1024 * 1024), None, "ok"),
    # the machine's meminfo wraps to 4 GiB: a 6 GiB pod does not fit
    (str(NODE_KB), str((1 << 54) + 4 * 1024 * 1024), "ok"),
    # 2^64-1 kB: 2^64 - 1024 bytes, an int64 capacity of -1024
    (str((1 << 64) - 1), None, "startup"),
]


@pytest.mark.parametrize(("node_kb", "machine_kb", "kind"), MEMTOTALS, ids=[f"m{i}" for i in range(len(MEMTOTALS))])
def test_a_memtotal_whose_bytes_wrap_is_cadvisors_wrapped_figure(
    oracle_binary: str, tmp_path: Path, node_kb: str, machine_kb: str | None, kind: str
) -> None:
    sys_root = _tree(tmp_path / "root", node_kb=node_kb, machine_kb=machine_kb)
    path = _scenario(tmp_path, sys_root, {"cpu": "1", "memory": "6Gi"})
    mine, theirs = _both(oracle_binary, path)
    assert mine.kind == theirs.kind == kind, (mine.message, theirs.message)
    if kind == "startup":
        assert "Expected capacity >= reservation" in theirs.message
    else:
        _cgroups_agree(oracle_binary, path)
    if machine_kb is not None:
        assert _step(theirs)[:2] == (False, "OutOfmemory")
    elif kind == "ok":
        assert _step(theirs)[0] is True


# -------------------------------------------------------------- nr_hugepages


#: nr_hugepages texts and the pages the kubelet finds (None: cadvisor's error)
NR_HUGEPAGES = [
    ("\n5\n", 5), (" 5", 5), ("\t5\n", 5), ("\r\n5", 5), ("\u00a05", 5), ("\v5", 5), ("\u20285\n", 5),
    ("5 6", 5), ("5x", 5), ("05", 5), ("5\x00", 5), ("4\n5", 4), ("0x5", 0),
    ("+5", None), ("-5", None), ("", None), ("\n", None), ("\x005", None), ("\ufeff5", None),
    ("18446744073709551616", None),
]


@pytest.mark.parametrize(("text", "pages"), NR_HUGEPAGES, ids=[f"nr{i}" for i in range(len(NR_HUGEPAGES))])
def test_nr_hugepages_is_read_as_cadvisor_reads_it(oracle_binary: str, tmp_path: Path, text: str,
                                                    pages: int | None) -> None:
    sys_root = _tree(tmp_path / "root", pools={2048: text})
    path = _scenario(tmp_path, sys_root, {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "10Mi"})
    mine, theirs = _both(oracle_binary, path)
    if pages is None:
        assert mine.kind == theirs.kind == "input"
        assert "could not parse file nr_hugepage for hugepages-2048kB" in theirs.message
        assert "could not parse file nr_hugepage for hugepages-2048kB" in mine.message
        assert "nr_hugepages" in mine.message.split(":")[0]  # (the file is named)
        return
    assert mine.kind == theirs.kind == "ok"
    assert _step(theirs)[0] is (pages >= 5)
    if pages < 5:
        assert f"capacity: {pages * 2 * 1024 * 1024}" in _step(theirs)[2]


#: cache id texts by CPU; the CPUs a 2-CPU pod gets with CPU 0 reserved when
#: the uncore caches are found (2-3) and when a scan error ends cache
#: discovery, so that the CPUs fall back to the socket as their uncore cache (1-2)
CACHE_IDS = [
    ({0: "0\n", 1: "0\n", 2: "1\n", 3: "1\n"}, "8192K\n", "3\n", "2-3"),
    ({0: " 0\n", 1: "\u00a00\n", 2: "\t1\n", 3: "\v1\n"}, "8192K\n", "+3\n", "2-3"),
    ({0: "0\n", 1: "0\n", 2: "\n1\n", 3: "\n1\n"}, "8192K\n", "3\n", "1-2"),
    ({0: "0\n", 1: "0\n", 2: "1\n", 3: "\r\n1\n"}, "8192K\n", "3\n", "1-2"),
    ({0: "0\n", 1: "0\n", 2: "1\n", 3: "1\n"}, "\n8192K\n", "3\n", "1-2"),
    ({0: "0\n", 1: "0\n", 2: "1\n", 3: "1\n"}, "8192 K\n", "3\n", "1-2"),
    ({0: "0\n", 1: "0\n", 2: "1\n", 3: "1\n"}, "8192K\n", "\n3\n", "1-2"),
]


@pytest.mark.parametrize(("ids", "size", "level", "cpus"), CACHE_IDS, ids=[f"c{i}" for i in range(len(CACHE_IDS))])
def test_cache_files_are_scanned_as_cadvisor_scans_them(oracle_binary: str, tmp_path: Path, ids: dict[int, str],
                                                        size: str, level: str, cpus: str) -> None:
    sys_root = _tree(tmp_path / "root", cache_ids=ids, cache_size=size, cache_level=level)
    config = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
              "cpuManagerPolicyOptions": {"prefer-align-cpus-by-uncorecache": "true"}}
    path = _scenario(tmp_path, sys_root, {"cpu": "2", "memory": "1Gi"}, config)
    mine, theirs = _both(oracle_binary, path)
    assert theirs.kind == "ok"
    assert [c["cpus"] for c in theirs.doc["steps"][0]["containers"]] == [cpus]


#: shared_cpu_map texts of CPUs 2-3 (cadvisor's getCPUCount: each word
#: TrimSpace'd, strconv.ParseUint(word, 16, 64)) and the pod's CPUs: 2-3
#: while the cache is read, 1-2 once a parse error ends cache discovery
CPU_MAPS = [
    ("c\n", "2-3"), (" c \n", "2-3"), ("0 , c\n", "2-3"), ("00000000000000000c\n", "2-3"),
    ("\u00a0c\u3000\n", "2-3"), ("ffffffffff\n", "2-3"),
    ("0xc\n", "1-2"), ("c_\n", "1-2"), ("\u0663\n", "1-2"), ("c\x1c\n", "1-2"), ("+c\n", "1-2"),
]


@pytest.mark.parametrize(("cpu_map", "cpus"), CPU_MAPS, ids=[f"map{i}" for i in range(len(CPU_MAPS))])
def test_shared_cpu_map_words_are_parsed_as_cadvisor_parses_them(oracle_binary: str, tmp_path: Path,
                                                                 cpu_map: str, cpus: str) -> None:
    sys_root = _tree(tmp_path / "root", cache_ids={0: "0\n", 1: "0\n", 2: "1\n", 3: "1\n"}, upper_map=cpu_map)
    config = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
              "cpuManagerPolicyOptions": {"prefer-align-cpus-by-uncorecache": "true"}}
    path = _scenario(tmp_path, sys_root, {"cpu": "2", "memory": "1Gi"}, config)
    _, theirs = _both(oracle_binary, path)
    assert [c["cpus"] for c in theirs.doc["steps"][0]["containers"]] == [cpus]


@pytest.mark.parametrize(("text", "ok"), [("\u00a03\u2028\n", True), ("3\x1c\n", False), ("\x1f3\n", False),
                                          ("\ufeff3\n", False)], ids=["nbsp", "fs", "us", "bom"])
def test_a_core_id_is_trimmed_as_go_trims_it(oracle_binary: str, tmp_path: Path, text: str, ok: bool) -> None:
    """``strings.TrimSpace`` (``unicode.IsSpace``), not Python's ``strip``,
    which also takes the separators U+001C-U+001F: there cadvisor's
    ``strconv.Atoi`` fails and the kubelet gets no topology."""
    sys_root = _tree(tmp_path / "root", core_ids={3: text})
    mine, theirs = _both(oracle_binary, _scenario(tmp_path, sys_root, {"cpu": "1", "memory": "1Gi"}))
    assert mine.kind == theirs.kind == ("ok" if ok else "input")
    if not ok:
        assert "invalid integer" in mine.message and "core_id" in mine.message


# ------------------------------------------------------------ huge page pools


#: pools (page kB -> nr_hugepages), a pod's limits, and the kubelet's step
#: (admitted, reason, message start), an answer that no map order changes
POOLS = [
    # 2^63 bytes of 1 GiB pages: MinInt64; memory minus it is negative: 0
    ({1048576: f"{1 << 33}\n"}, {"cpu": "1", "memory": "1Gi"},
     (False, "OutOfmemory", "Pod was rejected: Node didn't have enough resource: memory, requested: "
      "1073741824, used: 0, capacity: 0")),
    # and its own allocatable floors at 0
    ({1048576: f"{1 << 33}\n"}, {"cpu": "1", "memory": "1Gi", "hugepages-1Gi": "1Gi"},
     (False, "OutOfmemory", "Pod was rejected: Node didn't have enough resource: memory, requested: 1073741824")),
    # 2^63 + 1 GiB: -2^63 + 1 GiB; memory minus it is an inf.Dec past int64,
    # whose Value() wraps negative
    ({1048576: f"{(1 << 33) + 1}\n"}, {"cpu": "1", "memory": "1Gi"},
     (False, "OutOfmemory", "Pod was rejected: Node didn't have enough resource: memory, requested: "
      "1073741824, used: 0, capacity: -9223372029443440640")),
    # 2^64 + 2 GiB: wraps to 2 GiB, a pool like any other
    ({1048576: f"{(1 << 34) + 2}\n"}, {"cpu": "1", "memory": "1Gi", "hugepages-1Gi": "2Gi"}, (True, None, None)),
    # the largest page count: 2^64 - 2 MiB bytes, an int64 of -2 MiB
    ({2048: f"{(1 << 64) - 1}\n"}, {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "10Mi"},
     (False, "OutOfhugepages-2Mi", "Pod was rejected: Node didn't have enough resource: hugepages-2Mi, "
      "requested: 10485760, used: 0, capacity: 0")),
    # two wrapped pools whose order does not matter for a 1 GiB pod
    ({1048576: f"{1 << 33}\n", 2048: f"{(1 << 42) + 1}\n"}, {"cpu": "1", "memory": "1Gi"}, (True, None, None)),
]


@pytest.mark.parametrize(("pools", "limits", "step"), POOLS, ids=[f"p{i}" for i in range(len(POOLS))])
def test_a_hugepage_pool_past_an_int64_is_the_kubelets_wrapped_capacity(
    oracle_binary: str, tmp_path: Path, pools: dict[int, str], limits: dict[str, str], step: tuple[Any, ...]
) -> None:
    path = _scenario(tmp_path, _tree(tmp_path / "root", pools=pools), limits)
    mine, theirs = _both(oracle_binary, path)
    assert mine.kind == theirs.kind == "ok"
    admitted, reason, message = _step(theirs)
    assert (admitted, reason) == step[:2]
    assert (message or "").startswith(step[2] or "")
    _cgroups_agree(oracle_binary, path)


#: pools as ``node discover`` exports them, loaded back in the table form
#: (and pools larger than the node's memory in the synthetic form): the
#: kubelet runs such a node, and the table and synthetic forms take them as
#: the sysfs form does (they were refused before, so that an export of such
#: a tree did not load)
EXPORTED = [
    *[(pools, limits) for pools, limits, _ in POOLS],
    # 100 GiB of 1 GiB pages on an 8 GiB node: memory minus them floors at 0
    ({1048576: "100\n"}, {"cpu": "1", "memory": "1Gi"}),
    ({1048576: "100\n"}, {"cpu": "1", "memory": "1Gi", "hugepages-1Gi": "2Gi"}),
]
STATIC_MEMORY = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "memoryManagerPolicy": "Static",
                 "topologyManagerPolicy": "single-numa-node", "kubeReserved": {"memory": "1000Mi"},
                 "evictionHard": {"memory.available": "100Mi"},
                 "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}}]}


@pytest.mark.parametrize("config", [None, STATIC_MEMORY], ids=["default", "static-memory"])
@pytest.mark.parametrize(("pools", "limits"), EXPORTED, ids=[f"e{i}" for i in range(len(EXPORTED))])
def test_an_exported_tree_loads_back_as_the_same_node(
    oracle_binary: str, tmp_path: Path, pools: dict[int, str], limits: dict[str, str],
    config: dict[str, Any] | None,
) -> None:
    """``node discover``'s export of the tree, as the scenario's ``node``:
    podnuma and the kubelet agree on it, and give what they give for the
    tree itself."""
    import json

    from click.testing import CliRunner

    from podnuma.cli import cli

    sys_root = _tree(tmp_path / "root", pools=pools)
    by_tree = _scenario(tmp_path, sys_root, limits, config)
    tree_mine, tree_theirs = _both(oracle_binary, by_tree)
    res = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(sys_root.parent), "-o", "json"])
    assert res.exit_code == 0, res.output
    node = json.loads(res.output)["node"]
    doc = yaml.safe_load(by_tree.read_text())
    doc["node"] = {"name": "worker", **node}
    by_table = tmp_path / "table.yaml"
    by_table.write_text(yaml.safe_dump(doc, sort_keys=False))
    mine, theirs = _both(oracle_binary, by_table)
    assert (mine.kind, theirs.kind) == (tree_mine.kind, tree_theirs.kind)
    if mine.kind == "ok":
        assert _step(mine) == _step(tree_mine)
        assert _step(theirs) == _step(tree_theirs)
        _cgroups_agree(oracle_binary, by_table)
    else:
        assert mine.message.replace(str(by_table), "S") == tree_mine.message.replace(str(by_tree), "S")


@pytest.mark.parametrize("config", [None, STATIC_MEMORY], ids=["default", "static-memory"])
def test_synthetic_pools_larger_than_the_memory_are_the_kubelets(
    oracle_binary: str, tmp_path: Path, config: dict[str, Any] | None
) -> None:
    doc = {**HEADER, "node": {"name": "worker", "synthetic": {
        "sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4, "threadsPerCore": 1,
        "memoryPerNumaNode": "8Gi", "hugepagesPerNumaNode": {"hugepages-1Gi": "100Gi"}}},
        "kubeletConfig": config or {},
        "steps": [{"addPod": {"metadata": {"name": "a", "namespace": "x"},
                              "spec": {"containers": [{"name": "c", "resources": {"limits": {
                                  "cpu": "1", "memory": "1Gi", "hugepages-1Gi": "1Gi"}}}]}}}]}
    path = tmp_path / "synthetic.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    mine, theirs = _both(oracle_binary, path)
    assert mine.kind == theirs.kind
    if mine.kind == "ok":
        admitted, reason, _ = _step(theirs)
        assert (admitted, reason) == (False, "OutOfmemory")


def test_two_wrapped_pools_give_one_of_the_kubelets_answers(oracle_binary: str, tmp_path: Path) -> None:
    """A pool of exactly 2^63 bytes (1 GiB pages) and one of 2^63 + 2 MiB
    (2 MiB pages). The kubelet takes allocatable memory through its
    capacity map: 1 GiB pool first, memory is 0 then 2^63 - 2 MiB (a 16 GiB
    pod fits); 2 MiB pool first, an inf.Dec past 2^64 whose Value() wraps to
    8 GiB - 100Mi - 2 MiB (it does not). podnuma takes the smallest page
    first (documented in ``node_status_allocatable``)."""
    pools = {1048576: f"{1 << 33}\n", 2048: f"{(1 << 42) + 1}\n"}
    path = _scenario(tmp_path, _tree(tmp_path / "root", pools=pools), {"cpu": "1", "memory": "16Gi"})
    refused = (False, "OutOfmemory", "Pod was rejected: Node didn't have enough resource: memory, "
               "requested: 17179869184, used: 0, capacity: 8482979840")
    answers = {(True, None, None), refused}
    mine = run_podnuma(path)
    assert mine.kind == "ok" and _step(mine) == refused
    for theirs in run_oracle(oracle_binary, [path, path, path]):
        assert theirs.kind == "ok" and _step(theirs) in answers


# ------------------------------------------------- fleet analyze's assumptions


#: (pools, machine MemTotal kB or None, node MemTotal kB): nodes whose
#: allocatable memory the kubelet reports in an OutOfmemory message
STATUS = [
    ({1048576: f"{1 << 33}\n"}, None, str(NODE_KB)),
    ({1048576: f"{(1 << 33) + 1}\n"}, None, str(NODE_KB)),
    ({2048: f"{(1 << 42) + 1}\n"}, None, str(NODE_KB)),
    ({1048576: "2\n"}, str((1 << 54) + 4 * 1024 * 1024), str(NODE_KB)),
]


@pytest.mark.parametrize(("pools", "machine_kb", "node_kb"), STATUS, ids=[f"s{i}" for i in range(len(STATUS))])
def test_fleet_assumptions_take_the_kubelets_wrapped_capacity(
    oracle_binary: str, tmp_path: Path, pools: dict[int, str], machine_kb: str | None, node_kb: str
) -> None:
    """The node's status as the kubelet writes it (its capacity: int64s of
    bytes, printed by ``Quantity.String``; its allocatable memory: what it
    reports refusing a pod too big for it) contradicts nothing under the
    configuration the kubelet ran with; one more MiB of allocatable does."""
    from podnuma.api.kubeletconfig import load_kubelet_config
    from podnuma.api.quantity import Quantity
    from podnuma.cm.container_manager import go_int64
    from podnuma.fleet.assumptions import contradictions

    sys_root = _tree(tmp_path / "root", node_kb=node_kb, pools=pools, machine_kb=machine_kb)
    path = _scenario(tmp_path, sys_root, {"cpu": "1", "memory": "64Gi"})
    _, theirs = _both(oracle_binary, path)
    admitted, reason, message = _step(theirs)
    assert (admitted, reason) == (False, "OutOfmemory")
    allocatable = int(message.rsplit("capacity: ", 1)[1])  # (Value(): an int64)
    if allocatable < 0:
        # memory minus a pool wrapped negative: an inf.Dec between 2^63 and
        # 2^64 whose Value() wrapped; the status prints the exact figure
        allocatable += 1 << 64
    memory = int(machine_kb if machine_kb is not None else node_kb) * 1024
    capacity = {"cpu": "4", "memory": str(Quantity.from_int(go_int64(memory), binary=True))}
    for kb, text in pools.items():
        name = "hugepages-" + str(Quantity.from_int(kb * 1024, binary=True))
        capacity[name] = str(Quantity.from_int(go_int64(kb * 1024 * int(text)), binary=True))
    config = load_kubelet_config({})
    assert contradictions(config, 4, allocatable={"memory": str(allocatable)}, capacity=capacity,
                          nrt_attributes={}) == []
    (said,) = contradictions(config, 4, allocatable={"memory": str(allocatable + 2**20)}, capacity=capacity,
                             nrt_attributes={})
    assert said.startswith("status.allocatable memory is ")

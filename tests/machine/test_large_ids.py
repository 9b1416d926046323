"""Large, sparse socket and uncore-cache (L3) ids in the machine model.

cadvisor's socket and L3 ids are Go ``int``s, and the kubelet keeps them in
maps and ``cpuset.CPUSet``s, where only their order and equality matter.
The machine model's tables are keyed by bit position: the ids themselves
(shifted past negative ones) while they fit below ``DIRECT_KEY_LIMIT``,
else their ranks, so a socket id of 2^40 makes no 2^40-bit integer. The
kubelet's answers on such machines are checked in
``tests/oracle/test_large_ids.py``; here the model, the readers and the
time and memory a scenario takes.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.inputs.discover.table import load_table
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import DIRECT_KEY_LIMIT, CPUInfo, CPUTopology

ROOT = Path(__file__).resolve().parents[2]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _topology(sockets: tuple[int, ...], uncores: tuple[int, ...] | None = None) -> CPUTopology:
    """4 CPUs per socket, one NUMA node per socket, an L3 per 2 CPUs."""
    info = {}
    for cpu in range(4 * len(sockets)):
        socket = sockets[cpu // 4]
        uncore = socket if uncores is None else uncores[cpu // 2]
        info[cpu] = CPUInfo(numa_node=cpu // 4, socket=socket, core=cpu, uncore_cache=uncore)
    return CPUTopology(info)


def _widest(t: CPUTopology) -> int:
    return max(k.bit_length() for table in (t.socket_masks, t.uncore_masks) for k in table)


# ------------------------------------------------------------------ the keys


def test_small_ids_are_their_own_keys() -> None:
    t = _topology((0, 2, 5))
    assert sorted(t.socket_masks) == [0, 2, 5]
    assert t.socket_offset == 0
    assert t.details.cpus_in_sockets(5) == CPUSet.parse("8-11")
    assert t.details.sockets().list() == [0, 2, 5]


def test_keys_stay_ids_just_below_the_limit() -> None:
    t = _topology((0, DIRECT_KEY_LIMIT - 1))
    assert sorted(t.socket_masks) == [0, DIRECT_KEY_LIMIT - 1]
    t = _topology((-1, DIRECT_KEY_LIMIT - 2))
    assert (t.socket_offset, sorted(t.socket_masks)) == (1, [0, DIRECT_KEY_LIMIT - 1])


@pytest.mark.parametrize(
    "sockets",
    [(0, DIRECT_KEY_LIMIT), (0, 1_000_000), (0, 2**31), (7, 2**40, 3), (INT64_MAX, INT64_MIN, 0),
     (-1, 10**9), (-(2**40), 2**40)],
    ids=["limit", "1e6", "2p31", "2p40-unsorted", "int64-extremes", "minus-one-1e9", "pm-2p40"],
)
def test_large_ids_are_ranked(sockets: tuple[int, ...]) -> None:
    t = _topology(sockets)
    assert t.socket_offset is None
    ranked = sorted(sockets)
    assert sorted(t.socket_masks) == list(range(len(sockets)))
    for sid in sockets:
        key = t.socket_key(sid)
        assert key == ranked.index(sid)
        assert t.socket_id(key) == sid
        # the CPUs of the socket as reported
        assert t.details.cpus_in_sockets(key).list() == [c for c, i in t.cpu_info.items() if i.socket == sid]
    assert t.details.sockets().list() == list(range(len(sockets)))
    assert t.cpu_socket_id(0) == sockets[0]  # the id as reported
    assert t.num_sockets == len(sockets)
    assert _widest(t) <= 3


def test_an_unknown_id_has_no_group() -> None:
    t = _topology((0, 2**40))
    assert t.socket_key(12345) == -1
    assert t.details.cpus_in_sockets(t.socket_key(12345)).is_empty()
    small = _topology((0, 1))
    assert small.socket_key(5) == 5
    assert small.details.cpus_in_sockets(5).is_empty()


def test_uncore_ids_are_ranked_apart_from_socket_ids() -> None:
    t = _topology((0, 1), uncores=(2**40, 5, INT64_MIN, 2**40))
    assert t.uncore_offset is None and t.socket_offset == 0
    assert t.num_uncore_caches == 3
    assert [t.uncore_key(u) for u in (INT64_MIN, 5, 2**40)] == [0, 1, 2]
    assert t.details.cpus_in_uncore_caches(t.uncore_key(2**40)) == CPUSet.parse("0-1,6-7")
    assert t.details.uncore_in_numa_nodes(1).list() == [0, 2]
    assert t.uncore_id(0) == INT64_MIN


def test_the_tables_are_small_for_any_ids() -> None:
    """Every group query of a machine with Go's int extremes as ids is
    answered without wide integers."""
    t = _topology((INT64_MAX, INT64_MIN), uncores=(INT64_MAX, INT64_MIN, 2**62, -(2**62)))
    d = t.details
    started = time.perf_counter()
    for _ in range(1000):
        d.sockets()
        d.uncore_caches()
        d.sockets_in_numa_nodes(0, 1)
        d.uncore_in_numa_nodes(0)
        d.cores_in_sockets(0)
        d.numa_nodes_in_sockets(1)
    assert time.perf_counter() - started < 2.0
    assert d.sockets().mask.bit_length() <= 2


def test_ranked_keys_keep_the_table_order_of_the_cpus_form() -> None:
    rows = [{"id": c, "core": c % 2, "socket": (2**31 if c < 4 else 5), "numaNode": 0} for c in range(8)]
    t = load_table({"cpus": rows}).topology
    # socket 5 sorts before 2^31: it has the lower key
    assert t.details.cpus_in_sockets(0) == CPUSet.parse("4-7")
    assert t.details.cpus_in_sockets(1) == CPUSet.parse("0-3")


# ------------------------------------------------------------ whole scenarios


def _scenario(tmp_path: Path, sockets: tuple[int, int], options: dict[str, str]) -> Path:
    rows = []
    for cpu in range(32):
        first = cpu % 16
        rows.append({"id": cpu, "core": first % 8, "socket": sockets[first // 8], "numaNode": first // 4,
                     "uncoreCache": sockets[first // 8] + first // 4 % 2})
    cfg: dict[str, Any] = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                           "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerPolicy": "restricted",
                           "featureGates": {"CPUManagerPolicyAlphaOptions": True}, "cpuManagerPolicyOptions": options}
    steps = [{"addPod": {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": f"p{i}", "namespace": "d", "uid": f"0000000{i}-0000-4000-8000-000000000000"},
                         "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpu, "memory": "64Mi"}}}]}}}
             for i, cpu in enumerate(("2", "5", "3", "4"))]
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario",
           "node": {"cpus": rows, "memory": {n: {"memory": "4Gi"} for n in range(4)}},
           "kubeletConfig": cfg, "steps": steps}
    path = tmp_path / f"s{sockets[1]}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _cpus(path: Path) -> list[list[str]]:
    res = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json"])
    assert res.exit_code == 0, res.output
    return [[c["cpus"] for c in s["containers"]] for s in json.loads(res.output)["steps"]]


@pytest.mark.parametrize("options", [{"align-by-socket": "true"}, {}], ids=["align-by-socket", "packed"])
def test_a_scenario_with_huge_socket_ids_is_the_dense_one(tmp_path: Path, options: dict[str, str]) -> None:
    """Sockets 0 and 2^40 (uncore ids beside them) choose as sockets 0 and
    1 do: before ranking, align-by-socket made 2^40-bit masks (killed by the
    kernel for want of memory)."""
    dense = _cpus(_scenario(tmp_path, (0, 16), options))
    for big in (2**31, 2**40, INT64_MAX - 8):
        assert _cpus(_scenario(tmp_path, (0, big), options)) == dense, big


def test_simulate_stays_small_and_fast(tmp_path: Path) -> None:
    """The whole command on sockets 0 and 2^40 with align-by-socket, in a
    fresh process: seconds and tens of MB, not a hang."""
    path = _scenario(tmp_path, (0, 2**40), {"align-by-socket": "true"})
    code = (
        "import resource, sys, time\n"
        "from podnuma.cli import run\n"
        "t = time.perf_counter()\n"
        "def main() -> None:\n"  # (called from a function, run() only raises SystemExit)
        "    try:\n"
        "        run()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "main()\n"
        # the peak of this process's own memory (VmHWM): getrusage's maxrss
        # keeps, across exec, the size of the process that forked it (a
        # test worker's hundreds of MB)
        "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1]\n"
        "sys.stderr.write(f'{time.perf_counter() - t} {hwm}\\n')\n"
    )
    limit = 1 << 30  # 1 GiB of address space: the wide masks need far more
    proc = subprocess.run(
        [sys.executable, "-c", code, "simulate", str(path), "-o", "json"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit * 2, limit * 2)),
    )
    assert proc.returncode == 0, proc.stderr
    seconds, max_rss_kb = proc.stderr.split()[-2:]
    assert float(seconds) < 20
    assert int(max_rss_kb) < 300 * 1024
    assert all(s["admitted"] for s in json.loads(proc.stdout)["steps"])


# --------------------------------------------------------------- the readers


def _sysfs(root: Path, package: str, l3: str | None) -> Path:
    cpu_root = root / "devices" / "system" / "cpu"
    for cpu in range(4):
        topo = cpu_root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu}\n")
        (topo / "physical_package_id").write_text((package if cpu >= 2 else "0") + "\n")
        if l3 is not None:
            cache = cpu_root / f"cpu{cpu}" / "cache" / "index3"
            cache.mkdir(parents=True)
            (cache / "id").write_text((l3 if cpu >= 2 else "0") + "\n")
            (cache / "size").write_text("1024K\n")
            (cache / "level").write_text("3\n")
            (cache / "type").write_text("Unified\n")
            (cache / "shared_cpu_map").write_text("c\n" if cpu >= 2 else "3\n")
    nd = root / "devices" / "system" / "node" / "node0"
    nd.mkdir(parents=True)
    for cpu in range(4):
        (nd / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
    (nd / "meminfo").write_text("Node 0 MemTotal:       8388608 kB\n")
    (nd / "distance").write_text("10\n")
    return root


def _discover(tree: Path) -> Any:
    return CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(tree), "-o", "json"])


def test_discover_reads_large_package_and_cache_ids(tmp_path: Path) -> None:
    res = _discover(_sysfs(tmp_path, str(2**40), str(INT64_MAX)))
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["node"]["cpus"]
    assert [(r["socket"], r.get("uncoreCache")) for r in rows] == [
        (0, 0), (0, 0), (2**40, INT64_MAX), (2**40, INT64_MAX)]


@pytest.mark.parametrize("digits", [str(2**63), "9" * 5000, "-" + "1" * 30])
def test_a_package_id_out_of_gos_int_is_one_line(tmp_path: Path, digits: str) -> None:
    """``strconv.Atoi`` refuses it (cadvisor fails the machine); thousands
    of digits are refused without being converted."""
    res = _discover(_sysfs(tmp_path, digits, None))
    assert res.exit_code != 0
    message = res.output.strip()
    assert "\n" not in message and len(message) < 400, message
    assert "physical_package_id" in message and "value out of range" in message
    assert "internal error" not in message


@pytest.mark.parametrize("digits", [str(2**63), "7" * 5000, str(INT64_MIN - 1)])
def test_a_cache_id_out_of_gos_int_drops_the_cache_information(tmp_path: Path, digits: str) -> None:
    """cadvisor's ``Sscanf("%d")`` into an ``int`` fails: the node keeps no
    cache information and the uncore-cache ids fall back to the sockets."""
    res = _discover(_sysfs(tmp_path, "1", digits))
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["node"]["cpus"]
    assert all("uncoreCache" not in r or r["uncoreCache"] == r["socket"] for r in rows), rows

"""sysfs.py: a copy of /sys -> MachineInfo -> Machine, as cadvisor + the kubelet do."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from podnuma.errors import InputError
from podnuma.inputs.discover.sysfs import load_sysfs, read_sysfs
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUInfo, Machine

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT.parent / "shared" / "fixtures" / "sysfs"
GiB = 1024**3
MiB = 1024**2
KiB = 1024


# --------------------------------------------------------------------------- builder


@dataclass
class Tree:
    """A small sysfs tree: cpu -> (core_id, package); nodes -> cpus; L3 per cpu."""

    cpus: dict[int, tuple[int, int]]
    nodes: dict[int, list[int]] | None = None
    online: str | None = None
    l3: dict[int, tuple[int, list[int]]] = field(default_factory=dict)  # cpu -> (id, sharers)
    meminfo_kb: dict[int, int] = field(default_factory=dict)
    hugepages: dict[int, dict[int, int]] = field(default_factory=dict)  # node -> {kB: nr}
    distance: dict[int, str] = field(default_factory=dict)
    node_links: bool = True

    def write(self, root: Path) -> Path:
        cpu_root = root / "devices" / "system" / "cpu"
        cpu_root.mkdir(parents=True)
        if self.online is not None:
            (cpu_root / "online").write_text(self.online + "\n")
        for cpu, (core_id, pkg) in self.cpus.items():
            topo = cpu_root / f"cpu{cpu}" / "topology"
            topo.mkdir(parents=True)
            (topo / "core_id").write_text(f"{core_id}\n")
            (topo / "physical_package_id").write_text(f"{pkg}\n")
            cache = cpu_root / f"cpu{cpu}" / "cache"
            _cache(cache / "index0", 0, 1, "Data", 32, [cpu])
            if cpu in self.l3:
                cid, sharers = self.l3[cpu]
                _cache(cache / "index3", cid, 3, "Unified", 16384, sharers)
        for nid, members in (self.nodes or {}).items():
            nd = root / "devices" / "system" / "node" / f"node{nid}"
            nd.mkdir(parents=True)
            if self.node_links:
                for cpu in members:
                    (nd / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
            (nd / "cpulist").write_text(str(CPUSet(members)) + "\n")
            if nid in self.meminfo_kb:
                (nd / "meminfo").write_text(
                    f"Node {nid} MemTotal:       {self.meminfo_kb[nid]} kB\n"
                    f"Node {nid} MemFree:        1000 kB\n"
                )
            for size_kb, nr in self.hugepages.get(nid, {}).items():
                hp = nd / "hugepages" / f"hugepages-{size_kb}kB"
                hp.mkdir(parents=True)
                (hp / "nr_hugepages").write_text(f"{nr}\n")
                (hp / "free_hugepages").write_text(f"{nr}\n")
            if nid in self.distance:
                (nd / "distance").write_text(self.distance[nid] + "\n")
        return root


def _cache(d: Path, cid: int, level: int, kind: str, size_k: int, sharers: list[int]) -> None:
    d.mkdir(parents=True)
    mask = sum(1 << c for c in sharers)
    (d / "id").write_text(f"{cid}\n")
    (d / "level").write_text(f"{level}\n")
    (d / "type").write_text(f"{kind}\n")
    (d / "size").write_text(f"{size_k}K\n")
    (d / "shared_cpu_map").write_text(f"{mask:08x}\n")
    (d / "shared_cpu_list").write_text(str(CPUSet(sharers)) + "\n")


def rows(m: Machine) -> dict[int, tuple[int, int, int, int]]:
    """cpu -> (core, socket, numa, uncore)."""
    return {c: (i.core, i.socket, i.numa_node, i.uncore_cache) for c, i in m.topology.cpu_info.items()}


# ------------------------------------------------------------------- own trees


def two_socket_ht() -> Tree:
    # 2 sockets x 2 cores x 2 threads; node0 = socket0 = CPUs 0,1,4,5; L3 per socket.
    cpus = {0: (0, 0), 1: (1, 0), 2: (0, 1), 3: (1, 1), 4: (0, 0), 5: (1, 0), 6: (0, 1), 7: (1, 1)}
    s0, s1 = [0, 1, 4, 5], [2, 3, 6, 7]
    return Tree(
        cpus=cpus,
        nodes={0: s0, 1: s1},
        l3={c: (0, s0) if c in s0 else (1, s1) for c in cpus},
        meminfo_kb={0: 4 * 1024 * 1024, 1: 2 * 1024 * 1024},
        hugepages={0: {2048: 512, 1048576: 1}, 1: {2048: 0, 1048576: 0}},
        distance={0: "10 21", 1: "21 10"},
    )


def test_two_sockets_l3_per_node_falls_back_to_socket(tmp_path: Path) -> None:
    m = load_sysfs(two_socket_ht().write(tmp_path))
    t = m.topology
    assert (t.num_cpus, t.num_sockets, t.num_cores, t.num_numa_nodes) == (8, 2, 4, 2)
    # The L3 spans exactly the node's threads: cadvisor files it as a node cache.
    assert rows(m) == {
        0: (0, 0, 0, 0), 4: (0, 0, 0, 0), 1: (1, 0, 0, 0), 5: (1, 0, 0, 0),
        2: (2, 1, 1, 1), 6: (2, 1, 1, 1), 3: (3, 1, 1, 1), 7: (3, 1, 1, 1),
    }
    n0, n1 = m.numa_nodes
    assert n0.memory == 4 * GiB and n1.memory == 2 * GiB
    assert dict(n0.hugepages) == {2 * MiB: GiB, GiB: GiB}
    assert dict(n1.hugepages) == {2 * MiB: 0, GiB: 0}
    assert tuple(n0.distances) == (10, 21) and tuple(n1.distances) == (21, 10)
    info = read_sysfs(tmp_path)
    assert [c.uncore_caches for n in info.topology for c in n.cores] == [()] * 4
    assert [len(n.caches) for n in info.topology] == [1, 1]


def test_split_l3_gives_uncore_caches(tmp_path: Path) -> None:
    # One node, 4 cores without SMT, two L3s of two cores each (ids 4 and 9).
    tree = Tree(
        cpus={c: (c, 0) for c in range(4)},
        nodes={0: [0, 1, 2, 3]},
        l3={0: (4, [0, 1]), 1: (4, [0, 1]), 2: (9, [2, 3]), 3: (9, [2, 3])},
    )
    m = load_sysfs(tree.write(tmp_path))
    assert {c: i.uncore_cache for c, i in m.topology.cpu_info.items()} == {0: 4, 1: 4, 2: 9, 3: 9}
    assert m.topology.num_uncore_caches == 2


def test_offline_cpus_are_absent(tmp_path: Path) -> None:
    tree = Tree(cpus={c: (c, 0) for c in range(4)}, nodes={0: [0, 1, 2, 3]}, online="0,2-3")
    m = load_sysfs(tree.write(tmp_path))
    assert m.topology.cpus().list() == [0, 2, 3]
    assert m.topology.num_cpus == 3


def test_per_cpu_online_files_when_the_list_is_missing(tmp_path: Path) -> None:
    tree = Tree(cpus={c: (c, 0) for c in range(3)}, nodes={0: [0, 1, 2]})
    tree.write(tmp_path)
    (tmp_path / "devices/system/cpu/cpu1/online").write_text("0\n")
    (tmp_path / "devices/system/cpu/cpu2/online").write_text("1\n")
    assert load_sysfs(tmp_path).topology.cpus().list() == [0, 2]


def test_node_cpulist_when_links_are_missing(tmp_path: Path) -> None:
    tree = two_socket_ht()
    tree.node_links = False
    m = load_sysfs(tree.write(tmp_path))
    assert m.topology.details.cpus_in_numa_nodes(1).list() == [2, 3, 6, 7]


def test_cpu_without_topology_files_is_skipped(tmp_path: Path) -> None:
    tree = Tree(cpus={c: (c, 0) for c in range(3)}, nodes={0: [0, 1, 2]})
    tree.write(tmp_path)
    (tmp_path / "devices/system/cpu/cpu2/topology/core_id").unlink()
    m = load_sysfs(tmp_path)
    assert m.topology.cpus().list() == [0, 1]
    assert m.topology.num_cpus == 2


def test_no_numa_directories_gives_one_node_per_package(tmp_path: Path) -> None:
    tree = Tree(cpus={0: (0, 3), 1: (0, 5), 2: (1, 3), 3: (1, 5)}, online="0-2")
    m = load_sysfs(tree.write(tmp_path))
    assert m.numa_ids() == [3, 5]
    assert [n.memory for n in m.numa_nodes] == [0, 0]
    assert rows(m) == {0: (0, 3, 3, 3), 2: (2, 3, 3, 3), 1: (1, 5, 5, 5)}
    # cadvisor's count in this mode is every cpu* directory, offline ones too.
    assert m.topology.num_cpus == 4


def test_unreadable_cache_info_is_ignored(tmp_path: Path) -> None:
    tree = Tree(
        cpus={c: (c, 0) for c in range(4)},
        nodes={0: [0, 1, 2, 3]},
        l3={0: (4, [0, 1]), 1: (4, [0, 1]), 2: (9, [2, 3]), 3: (9, [2, 3])},
    )
    tree.write(tmp_path)
    (tmp_path / "devices/system/cpu/cpu2/cache/index3/id").unlink()
    m = load_sysfs(tmp_path)
    # Core 0 and 1 were read before the failure; the rest of the node has none.
    assert {c: i.uncore_cache for c, i in m.topology.cpu_info.items()} == {0: 4, 1: 4, 2: 0, 3: 0}


def test_directory_holding_sys_is_accepted(tmp_path: Path) -> None:
    two_socket_ht().write(tmp_path / "sys")
    assert load_sysfs(tmp_path).topology.num_cpus == 8


@pytest.mark.parametrize(
    ("relpath", "content"),
    [
        ("devices/system/cpu/cpu1/topology/core_id", "one\n"),
        ("devices/system/cpu/cpu1/topology/physical_package_id", "\n"),
        ("devices/system/cpu/online", "0-x\n"),
        ("devices/system/node/node0/meminfo", "Node 0 MemFree: 1 kB\n"),
        ("devices/system/node/node0/distance", "10  21\n"),
        ("devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "lots\n"),
        # past Go's int (strconv.Atoi: value out of range), not printed as a core id
        ("devices/system/cpu/cpu1/topology/core_id", "99999999999999999999999\n"),
        ("devices/system/cpu/cpu1/topology/physical_package_id", "-9223372036854775809\n"),
        # past a uint64 of pages (past the bytes an int64 capacity holds is
        # the kubelet's wrapped capacity, not an error: tests/machine)
        ("devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "99999999999999999999999\n"),
    ],
)
def test_bad_files_name_the_file(tmp_path: Path, relpath: str, content: str) -> None:
    two_socket_ht().write(tmp_path)
    target = tmp_path / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    with pytest.raises(InputError) as exc:
        load_sysfs(tmp_path)
    assert exc.value.file == str(target)


def test_an_endless_file_is_refused_at_the_byte_limit(tmp_path: Path) -> None:
    """A copy of sysfs is an input: a file in it that is a link to
    ``/dev/zero`` is refused once past the inputs' byte limit, naming it
    (it was read until memory ran out)."""
    from podnuma.inputs.limits import DEFAULT_LIMITS

    two_socket_ht().write(tmp_path)
    target = tmp_path / "devices/system/node/node0/meminfo"
    target.unlink()
    target.symlink_to("/dev/zero")
    with pytest.raises(InputError) as exc:
        load_sysfs(tmp_path)
    assert exc.value.file == str(target)
    assert exc.value.message == f"cannot read: larger than the limit of {DEFAULT_LIMITS.max_bytes} bytes"


def test_bad_hugepage_dir_name(tmp_path: Path) -> None:
    two_socket_ht().write(tmp_path)
    bad = tmp_path / "devices/system/node/node1/hugepages/hugepagesXkB"
    bad.mkdir()
    with pytest.raises(InputError) as exc:
        load_sysfs(tmp_path)
    assert exc.value.file == str(bad)


def test_not_a_sysfs_root(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_sysfs(tmp_path)
    assert exc.value.file == str(tmp_path)
    assert "devices/system is missing" in str(exc.value)


def test_a_missing_path_or_a_file_is_said_so(tmp_path: Path) -> None:
    """Not "devices/system is missing" for a path that is not there at all
    or is a file: what is wrong with the path itself."""
    with pytest.raises(InputError) as exc:
        load_sysfs(tmp_path / "nowhere")
    assert (exc.value.file, str(exc.value).split(": ", 1)[1]) == (
        str(tmp_path / "nowhere"), "cannot read: No such file or directory")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError) as exc:
        load_sysfs(tmp_path / "file")
    assert "not a directory" in str(exc.value)


def test_no_cpus_at_all(tmp_path: Path) -> None:
    (tmp_path / "devices/system/cpu").mkdir(parents=True)
    with pytest.raises(InputError):
        load_sysfs(tmp_path)


def test_no_online_cpu_is_the_kubelet_error(tmp_path: Path) -> None:
    tree = Tree(cpus={0: (0, 0), 1: (1, 0)}, nodes={0: [0, 1]}, online="5")
    with pytest.raises(InputError, match="could not detect number of cpus"):
        load_sysfs(tree.write(tmp_path))


# ------------------------------------------------------------- real snapshots


@pytest.fixture(scope="session")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    if not FIXTURES.is_dir():
        pytest.skip(f"shared sysfs snapshots not found at {FIXTURES} (../shared/fixtures/sysfs)")
    out: dict[str, Path] = {}
    base = tmp_path_factory.mktemp("sysfs-snapshots")
    for archive in sorted(FIXTURES.glob("*.tar.gz")):
        name = archive.name.removesuffix(".tar.gz")
        dest = base / name
        dest.mkdir()
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter=_safe_member)
        out[name] = dest / "sys"
    yield out


def _safe_member(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """Only sys/devices/system, through tarfile's "data" filter (skipping what it refuses)."""
    if not member.name.lstrip("./").startswith("sys/devices/system"):
        return None
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


def snap(snapshots: dict[str, Path], name: str) -> Machine:
    if name not in snapshots:
        pytest.skip(f"snapshot {name} not in {FIXTURES}")
    return load_sysfs(snapshots[name])


def test_snapshot_dual_xeon_two_numa(snapshots: dict[str, Path]) -> None:
    m = snap(snapshots, "linux-amd64-8581cf3a529e5d8b97ea876eade2f60d")
    t = m.topology
    assert (t.num_cpus, t.num_sockets, t.num_cores, t.num_numa_nodes) == (24, 2, 12, 2)
    evens = CPUSet(range(0, 24, 2))
    assert t.details.cpus_in_numa_nodes(0) == evens
    assert t.details.cpus_in_numa_nodes(1) == CPUSet(range(1, 24, 2))
    # Node 0 (even CPUs) is package 1; siblings are (c, c+12).
    assert t.cpu_info[0] == CPUInfo(numa_node=0, socket=1, core=0, uncore_cache=1)
    assert t.cpu_info[13] == CPUInfo(numa_node=1, socket=0, core=1, uncore_cache=0)
    for cpu in range(12):
        assert t.details.cpus_in_cores(cpu).list() == [cpu, cpu + 12]
    # Each L3 covers exactly its node: node caches, so uncore ids = socket ids.
    assert all(i.uncore_cache == i.socket for i in t.cpu_info.values())
    n0, n1 = m.numa_nodes
    assert n0.memory == 32980312 * KiB and n1.memory == 32940968 * KiB
    assert dict(n0.hugepages) == {2 * MiB: 0, GiB: 0} == dict(n1.hugepages)
    assert tuple(n0.distances) == (10, 20) and tuple(n1.distances) == (20, 10)


def test_snapshot_hybrid_single_socket(snapshots: dict[str, Path]) -> None:
    m = snap(snapshots, "linux-amd64-415ee03b8c4d1c4f07ae2e9d8b3d3d6d")
    t = m.topology
    # 4 P-cores with HT (0-7) and 8 E-cores (8-15).
    assert (t.num_cpus, t.num_sockets, t.num_cores, t.num_numa_nodes) == (16, 1, 12, 1)
    assert [t.details.cpus_in_cores(c).list() for c in (0, 2, 4, 6)] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert t.details.cores().list() == [0, 2, 4, 6, *range(8, 16)]
    assert {i.uncore_cache for i in t.cpu_info.values()} == {0}
    (n0,) = m.numa_nodes
    assert n0.memory == 32542668 * KiB
    assert dict(n0.hugepages) == {2 * MiB: 0, GiB: 0}


def test_snapshot_split_l3_single_socket(snapshots: dict[str, Path]) -> None:
    m = snap(snapshots, "linux-amd64-61797caf7c0b6bca1725ad7975ed4773")
    t = m.topology
    assert (t.num_cpus, t.num_sockets, t.num_cores, t.num_numa_nodes) == (12, 1, 6, 1)
    assert t.details.cpus_in_cores(0).list() == [0, 6]
    # Two L3s (ids 0 and 1) of six CPUs each on a twelve-CPU node: uncore caches.
    assert t.details.cpus_in_uncore_caches(0) == CPUSet.parse("0-2,6-8")
    assert t.details.cpus_in_uncore_caches(1) == CPUSet.parse("3-5,9-11")
    (n0,) = m.numa_nodes
    assert n0.memory == 0  # this snapshot has no node meminfo
    assert dict(n0.hugepages) == {}


def test_snapshot_accel_nvidia(snapshots: dict[str, Path]) -> None:
    m = snap(snapshots, "linux-amd64-accel-nvidia")
    t = m.topology
    assert (t.num_cpus, t.num_sockets, t.num_cores, t.num_numa_nodes) == (8, 1, 8, 1)
    assert t.details.cores().list() == list(range(8))  # cadvisor core ids 0,57..63 -> CPU ids
    (n0,) = m.numa_nodes
    assert n0.memory == 30601816 * KiB
    assert dict(n0.hugepages) == {2 * MiB: 0}


def test_snapshot_offline_cpus(snapshots: dict[str, Path]) -> None:
    m = snap(snapshots, "linux-amd64-offlineCPUs")
    t = m.topology
    assert t.cpus().list() == [0, 1]
    assert (t.num_cpus, t.num_sockets, t.num_cores) == (2, 2, 2)
    assert t.cpu_info[1] == CPUInfo(numa_node=0, socket=1, core=1, uncore_cache=1)
    assert m.numa_nodes[0].memory == 7881912 * KiB


def test_snapshot_arm64_package_60(snapshots: dict[str, Path]) -> None:
    m = snap(snapshots, "linux-arm64-c288e0776090cd558ef793b2a4e61939")
    t = m.topology
    assert t.cpu_info == {0: CPUInfo(numa_node=0, socket=60, core=0, uncore_cache=60)}
    assert (t.num_cpus, t.num_sockets) == (1, 1)
    assert sorted(m.numa_nodes[0].hugepages) == [64 * KiB, 2 * MiB, 32 * MiB, GiB]


def test_snapshot_s390x_no_l3(snapshots: dict[str, Path]) -> None:
    m = snap(snapshots, "linux-s390x-snapshot")
    t = m.topology
    assert (t.num_cpus, t.num_sockets, t.num_cores, t.num_numa_nodes) == (8, 1, 4, 1)
    assert [t.details.cpus_in_cores(c).list() for c in (0, 2, 4, 6)] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert {(i.socket, i.uncore_cache) for i in t.cpu_info.values()} == {(2, 2)}
    assert m.numa_nodes[0].memory == 112832212 * KiB
    assert dict(m.numa_nodes[0].hugepages) == {MiB: 0}


def test_ids_at_the_edge_of_go_int_are_read(tmp_path: Path) -> None:
    """The largest core id Go's Atoi parses is a core id; hugepages whose
    bytes still fit an int64 are read."""
    tree = two_socket_ht()
    tree.hugepages = {0: {2048: 2**42 - 1}}
    tree.write(tmp_path)
    (tmp_path / "devices/system/cpu/cpu1/topology/core_id").write_text(f"{2**63 - 1}\n")
    info = read_sysfs(tmp_path)
    assert any(core.id == 2**63 - 1 for node in info.topology for core in node.cores)
    assert [(h.page_size, h.num_pages) for h in info.topology[0].hugepages] == [(2048, 2**42 - 1)]


def test_discover_name_is_checked_as_the_node_form_checks_it(tmp_path: Path) -> None:
    """``node discover --name``: a name the node form refuses (a line
    break: ``simulate`` would refuse the mapping printed) is refused first,
    one line, exit 2, nothing printed."""
    from click.testing import CliRunner

    from podnuma.cli import cli

    two_socket_ht().write(tmp_path)
    got = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(tmp_path), "--name", "a\nb"])
    assert got.exit_code == 2 and got.stdout == ""
    assert got.stderr.splitlines() == [
        r"error: --name: must not contain control characters, got '\n' in 'a\nb'"]
    ok = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(tmp_path), "--name", "n1", "-o", "json"])
    assert ok.exit_code == 0, ok.output

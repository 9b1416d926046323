"""The online CPU list is walked entry by entry, per CPU.

cadvisor v0.60.5 (``utils/sysfs/sysfs.go`` ``IsCPUOnline`` /
``isCPUOnline``) reads ``devices/system/cpu/online`` for each CPU it asks
about: the entries in order, each a CPU id or a ``lo-hi`` range parsed as
uint16s, answering "online" at the first entry holding the CPU. A bad entry
only matters to the CPUs not held by an entry before it (cadvisor errs, and
counts those CPUs offline; podnuma refuses the tree naming the file, as it
does for an unreadable list: a live kernel never writes one). The CPU's id
is its directory number cut to a uint16 (``cpu65537`` reads as CPU 1).

Compared with the kubelet through the Go oracle (whose rooted sysfs reads
the list the same way).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from podnuma.errors import InputError
from podnuma.inputs.discover.sysfs import load_sysfs, offline_cpus
from tests.oracle.harness import compare, run_oracle, run_podnuma
from tests.oracle.test_sysfs_node_cpu_links_differential import _scenario, _sysfs_tree


@pytest.mark.parametrize("online", ["0-3,x", "3,0-2,x-y-z", "0-3,70000", "0-3,2-1", "0-3,", "0-2,3,-"])
def test_a_bad_entry_after_every_cpu_keeps_them_online(oracle_binary: str, tmp_path: Path, online: str) -> None:
    """Every CPU is held before the bad entry: four online CPUs, the kubelet
    starts and admits as with a clean list."""
    sys_root = _sysfs_tree(tmp_path / "root")
    (sys_root / "devices" / "system" / "cpu" / "online").write_text(online + "\n")
    assert load_sysfs(sys_root).topology.num_cpus == 4
    path, doc = _scenario(tmp_path, sys_root)
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "ok", theirs.message
    assert compare(mine, theirs, doc) == []


@pytest.mark.parametrize("online", ["0-1,x,2-3", "0-1,3-2,2-3", "0-1,1-2-3,2-3", "0-1,65536,2-3"])
def test_a_bad_entry_before_a_cpu_is_refused_naming_the_list(tmp_path: Path, online: str) -> None:
    """CPU 2 is reached only past the bad entry: one error naming the file."""
    sys_root = _sysfs_tree(tmp_path / "root")
    file = sys_root / "devices" / "system" / "cpu" / "online"
    file.write_text(online + "\n")
    with pytest.raises(InputError) as exc:
        load_sysfs(sys_root)
    assert exc.value.file == str(file)
    assert "invalid online CPU list" in exc.value.message and "CPU 2" in exc.value.message


def test_cpu_ids_are_read_as_uint16s(tmp_path: Path) -> None:
    """``cpu65537`` is CPU 1 to the list (online with "0-3"); ``cpu65540``
    is CPU 4 (offline)."""
    sys_root = _sysfs_tree(tmp_path / "root")
    cpu_root = sys_root / "devices" / "system" / "cpu"
    (cpu_root / "cpu65537").mkdir()
    (cpu_root / "cpu65540").mkdir()
    assert offline_cpus(sys_root.parent) == {65540: None}

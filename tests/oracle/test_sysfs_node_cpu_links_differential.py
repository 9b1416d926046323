"""A NUMA node's CPU entries in sysfs are read through.

cadvisor's ``GetNodesInfo`` lists ``devices/system/node/nodeN/cpu*[0-9]``
and ``getCoresInfo`` opens ``topology/core_id`` and
``topology/physical_package_id`` under each entry as listed (utils/sysinfo/
sysinfo.go, utils/sysfs/sysfs.go): on a live kernel the entry is a link to
``../../cpu/cpuM``, and the system follows it. So the link decides: a link
that loops is an error the kubelet does not start with (``too many levels
of symbolic links``), as is one to a regular file (``not a directory``); a
link to nothing, or to a directory without ``topology``, drops the CPU
(the file "does not exist": skipped). A link leading out of the tree is
refused by podnuma (a copy of sysfs is read, never the host's files).

Compared with the kubelet through the Go oracle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.errors import InputError
from podnuma.inputs.discover.sysfs import load_sysfs
from tests.oracle.harness import compare, run_oracle, run_podnuma

HEADER = {"apiVersion": "podnuma.io/v1", "kind": "Scenario"}


def _sysfs_tree(root: Path) -> Path:
    """Four online CPUs, one package, NUMA node 0 linking them."""
    sys_root = root / "sys"
    cpu_root = sys_root / "devices" / "system" / "cpu"
    cpu_root.mkdir(parents=True)
    (cpu_root / "online").write_text("0-3\n")
    node = sys_root / "devices" / "system" / "node" / "node0"
    node.mkdir(parents=True)
    for cpu in range(4):
        topo = cpu_root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu}\n")
        (topo / "physical_package_id").write_text("0\n")
        (node / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
    (node / "meminfo").write_text("Node 0 MemTotal:  1000000 kB\n")
    (root / "proc").mkdir()
    (root / "proc" / "meminfo").write_text("MemTotal: 1000000 kB\n")
    return sys_root


def _scenario(tmp_path: Path, sys_root: Path) -> tuple[Path, dict[str, Any]]:
    doc = {
        **HEADER,
        "node": {"name": "worker", "sysfs": str(sys_root)},
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
        "steps": [{"addPod": {"metadata": {"name": "p", "namespace": "s"},
                              "spec": {"containers": [{"name": "a", "resources": {
                                  "limits": {"cpu": "1", "memory": "1Gi"}}}]}}}],
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path, doc


def _replace_cpu0(sys_root: Path, how: str) -> None:
    entry = sys_root / "devices" / "system" / "node" / "node0" / "cpu0"
    entry.unlink()
    if how == "file":
        (sys_root / "devices" / "system" / "cpu" / "plain").write_text("x\n")
        entry.symlink_to("../../cpu/plain")
    elif how == "empty-directory":
        entry.mkdir()
    else:
        entry.symlink_to(how)


@pytest.mark.parametrize(
    ("how", "kind"),
    [("cpu0", "input"), ("file", "input"), ("../../cpu/cpu77", "startup"), ("empty-directory", "startup"),
     ("../../cpu/cpu1", "ok")],
    ids=["self-loop", "to-a-file", "dangling", "no-topology", "to-another-cpu"],
)
def test_node_cpu_entry_is_read_through(oracle_binary: str, tmp_path: Path, how: str, kind: str) -> None:
    """What the entry leads to decides: an error, CPU 0 dropped (then
    ``reservedSystemCPUs: 0`` is not a machine CPU: no start), or CPU 1's
    topology read under CPU 0's number (the kubelet starts)."""
    sys_root = _sysfs_tree(tmp_path / "root")
    _replace_cpu0(sys_root, how)
    path, doc = _scenario(tmp_path, sys_root)
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == kind, theirs.message
    assert compare(mine, theirs, doc) == []
    if how == "cpu0":
        assert "too many levels of symbolic links" in mine.message


def test_a_loop_is_refused_naming_the_entry(tmp_path: Path) -> None:
    """One line naming the file read through the looping link (the system
    gives up after its link limit: no hang)."""
    sys_root = _sysfs_tree(tmp_path / "root")
    _replace_cpu0(sys_root, "cpu0")
    with pytest.raises(InputError) as exc:
        load_sysfs(sys_root)
    assert exc.value.file == str(sys_root / "devices/system/node/node0/cpu0/topology/core_id")
    assert "too many levels of symbolic links" in exc.value.message


@pytest.mark.parametrize("target", ["/etc", "../../../../../.."])
def test_a_link_out_of_the_tree_is_refused(tmp_path: Path, target: str) -> None:
    """The host's files are never read for the copy's: a node's entry that
    leads out of the tree is an error naming the entry."""
    sys_root = _sysfs_tree(tmp_path / "root")
    _replace_cpu0(sys_root, target)
    with pytest.raises(InputError) as exc:
        load_sysfs(sys_root)
    assert "leads out of the sysfs tree" in exc.value.message
    assert exc.value.file == str(sys_root / "devices/system/node/node0/cpu0/topology/core_id")


def test_a_topology_file_linking_out_of_the_tree_is_refused(tmp_path: Path) -> None:
    """The file itself, reached through the node's entry, may be the link
    out: refused the same way."""
    sys_root = _sysfs_tree(tmp_path / "root")
    outside = tmp_path / "outside"
    outside.write_text("0\n")
    core_id = sys_root / "devices/system/cpu/cpu3/topology/core_id"
    core_id.unlink()
    core_id.symlink_to(outside)
    with pytest.raises(InputError) as exc:
        load_sysfs(sys_root)
    assert "leads out of the sysfs tree" in exc.value.message
    assert exc.value.file == str(sys_root / "devices/system/node/node0/cpu3/topology/core_id")


def test_a_bad_core_id_names_the_file_holding_it(tmp_path: Path) -> None:
    """Read through the link, a malformed ``core_id`` is named where it is
    (``devices/system/cpu/cpuM``), the file to fix."""
    sys_root = _sysfs_tree(tmp_path / "root")
    bad = sys_root / "devices/system/cpu/cpu2/topology/core_id"
    bad.write_text("two\n")
    with pytest.raises(InputError) as exc:
        load_sysfs(sys_root)
    assert exc.value.file == str(bad)

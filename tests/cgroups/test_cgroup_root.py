"""The kubelet configuration's ``cgroupRoot`` and ``cgroupsPerQOS`` in
``podnuma cgroups plan|apply`` (and ``--cgroup-root``, the kubelet's flag,
in place of the field): the paths and values written, and the kubelet's
start-up refusals, as kubelet v1.37 gives them (checked against the
kubelet's own code in tests/oracle/test_cgroup_root_differential.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli

HERE = Path(__file__).parent
FULL = HERE / "full.yaml"
G = "11111111-aaaa-bbbb-cccc-000000000001"
NO_QOS = ("--set", "cgroupsPerQOS=false", "--set", "enforceNodeAllocatable=[]")
#: the capacity of full.yaml's node: 8 CPUs (8192 shares: kubelet weight
#: 313), 16 GiB, 1 GiB of 2 MiB pages; allocatable memory is 16 GiB - 924 MiB
CAPACITY_MEMORY, ALLOCATABLE_MEMORY = "17179869184", "16210984960"


def _plan(*args: str, driver: str = "cgroupfs", version: str = "2", scenario: Path = FULL) -> dict[str, Any]:
    res = CliRunner().invoke(
        cli, ["cgroups", "plan", str(scenario), "--driver", driver, "--cgroup-version", version, "-o", "json", *args]
    )
    assert res.exit_code == 0, res.output
    doc: dict[str, Any] = json.loads(res.output)
    return doc


def _paths(doc: dict[str, Any], kind: str) -> list[str]:
    return [c["path"] for c in doc["cgroups"] if c["kind"] == kind]


def _with_config(tmp_path: Path, **fields: Any) -> Path:
    doc = yaml.safe_load(FULL.read_text())
    doc["kubeletConfig"].update(fields)
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("driver", "node", "pod"),
    [
        ("cgroupfs", "/custom/a-b/kubepods", f"/custom/a-b/kubepods/pod{G}"),
        ("systemd", "/custom.slice/custom-a_b.slice/custom-a_b-kubepods.slice",
         f"/custom.slice/custom-a_b.slice/custom-a_b-kubepods.slice/custom-a_b-kubepods-pod{G.replace('-', '_')}.slice"),
    ],
)  # fmt: skip
def test_set_cgroup_root_moves_the_tree(driver: str, node: str, pod: str) -> None:
    doc = _plan("--set", "cgroupRoot=/custom/a-b", driver=driver)
    assert _paths(doc, "node") == [node]
    assert pod in _paths(doc, "pod")
    # the root's own cgroups hold nothing the kubelet writes
    roots = [c for c in doc["cgroups"] if c["kind"] == "root"]
    assert [r["path"] for r in roots] == [node.rsplit("/", 2)[0], node.rsplit("/", 1)[0]]
    assert all(r["files"] == {} for r in roots)
    kubepods = doc["cgroups"][len(roots)]
    assert kubepods["files"]["memory.max"] == ALLOCATABLE_MEMORY


def test_the_config_file_field_and_the_flag(tmp_path: Path) -> None:
    scenario = _with_config(tmp_path, cgroupRoot="/from-config")
    assert _paths(_plan(scenario=scenario), "node") == ["/from-config/kubepods"]
    # --cgroup-root, as the kubelet's flag, wins over the file's field
    assert _paths(_plan("--cgroup-root", "/from-flag", scenario=scenario), "node") == ["/from-flag/kubepods"]
    # an empty flag is "/" with cgroupsPerQOS (server.go's default)
    assert _paths(_plan("--cgroup-root", "", scenario=scenario), "node") == ["/kubepods"]
    # neither: "/"
    assert _paths(_plan(), "node") == ["/kubepods"]


def test_enforcement_without_pods_sizes_kubepods_from_capacity() -> None:
    doc = _plan("--set", "enforceNodeAllocatable=[]")
    files = doc["cgroups"][0]["files"]
    assert doc["cgroups"][0]["path"] == "/kubepods"
    assert files["memory.max"] == CAPACITY_MEMORY and files["cpu.weight"] == "313"


def test_no_qos_plan_has_no_kubelet_pod_cgroups() -> None:
    doc = _plan(*NO_QOS, "--set", "cgroupRoot=/custom", driver="systemd", version="1")
    assert _paths(doc, "node") == [] and _paths(doc, "qos") == [] and _paths(doc, "pod") == []
    root = doc["cgroups"][0]
    assert root["path"] == "/custom.slice" and root["kind"] == "root"
    # enforceNodeAllocatableCgroups: the capacity, huge pages bounded (no
    # QoS container manager), no cpuset (the static policy has CPUs)
    assert root["files"] == {
        "cpu.shares": "8192", "memory.limit_in_bytes": CAPACITY_MEMORY,
        "hugetlb.2MB.limit_in_bytes": "1073741824", "hugetlb.2MB.rsvd.limit_in_bytes": "1073741824",
    }  # fmt: skip
    containers = [c for c in doc["cgroups"] if c["kind"] == "container"]
    assert len(containers) == 3 and all(c["path"].startswith("/k8s.io/") for c in containers)
    g = next(c for c in containers if c["podUID"] == G)
    assert g["files"]["cpuset.cpus"] == "1,5" and g["files"]["memory.limit_in_bytes"] == "1073741824"


def test_no_qos_root_reset_without_memory_qos() -> None:
    doc = _plan(*NO_QOS, "--set", "cgroupRoot=/custom", "--set", "featureGates.MemoryQoS=false")
    files = doc["cgroups"][0]["files"]
    assert files["memory.min"] == "0" and files["memory.low"] == "0"


def test_no_qos_without_a_root_writes_no_kubelet_cgroup() -> None:
    doc = _plan(*NO_QOS)
    assert [c["kind"] for c in doc["cgroups"] if c["writer"] == "kubelet"] == []
    # an explicit empty --cgroup-root stays empty without cgroupsPerQOS
    doc = _plan(*NO_QOS, "--set", "cgroupRoot=/custom", "--cgroup-root", "")
    assert [c["kind"] for c in doc["cgroups"] if c["writer"] == "kubelet"] == []


def test_no_qos_apply_dry_run_and_real(tmp_path: Path) -> None:
    args = ["cgroups", "apply", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2", "--root", str(tmp_path),
            *NO_QOS, "--set", "cgroupRoot=/custom"]  # fmt: skip
    res = CliRunner().invoke(cli, [*args, "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "write custom/cpu.weight '313'" in res.output and "kubepods" not in res.output
    assert list(tmp_path.iterdir()) == []
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "custom/cpu.weight").read_text().strip() == "313"
    assert (tmp_path / "custom/memory.max").read_text().strip() == CAPACITY_MEMORY
    # MemoryQoS is on by default: no memory protection reset on the root
    assert not (tmp_path / "custom/memory.min").exists()
    assert not (tmp_path / "kubepods").exists() and not (tmp_path / "custom/kubepods").exists()
    cpusets = sorted((d / "cpuset.cpus").read_text().strip() for d in (tmp_path / "k8s.io").iterdir()
                     if (d / "cpuset.cpus").exists())  # fmt: skip
    assert cpusets == ["0,2-4,6-7", "0,2-4,6-7", "1,5"]


def test_apply_under_a_configured_root(tmp_path: Path) -> None:
    args = ["cgroups", "apply", str(FULL), "--driver", "systemd", "--cgroup-version", "2", "--root", str(tmp_path),
            "--set", "cgroupRoot=/custom"]  # fmt: skip
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    kubepods = tmp_path / "custom.slice/custom-kubepods.slice"
    assert (kubepods / "memory.max").read_text().strip() == ALLOCATABLE_MEMORY
    assert (kubepods / "custom-kubepods-burstable.slice/cpu.weight").read_text().strip() == "20"


NO_QOS_REFUSED = (
    'kubelet would not start: invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when '
    '"pods" contained in enforceNodeAllocatable (--enforce-node-allocatable)'
)


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_no_qos_with_pods_enforced_is_refused(tmp_path: Path, command: str) -> None:
    extra = ["--root", str(tmp_path), "--dry-run"] if command == "apply" else []
    res = CliRunner().invoke(cli, ["cgroups", command, str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2",
                                   "--set", "cgroupsPerQOS=false", *extra])  # fmt: skip
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {NO_QOS_REFUSED} (--set: cgroupsPerQOS)"
    assert list(tmp_path.iterdir()) == []


def test_no_qos_refusal_names_the_scenario_field(tmp_path: Path) -> None:
    scenario = _with_config(tmp_path, cgroupsPerQOS=False)
    res = CliRunner().invoke(cli, ["cgroups", "plan", str(scenario), "--driver", "cgroupfs", "--cgroup-version", "2"])
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {NO_QOS_REFUSED} ({scenario}: kubeletConfig.cgroupsPerQOS)"


PANIC = ("'/custom/' has an empty component (two '/' in a row, or one at the end); the kubelet with the systemd "
         "driver would panic at start (ToSystemd: ExpandSlice: invalid slice name: {slice})")  # fmt: skip


def test_systemd_root_with_an_empty_component(tmp_path: Path) -> None:
    base = ["cgroups", "plan", "--driver", "systemd", "--cgroup-version", "2"]
    res = CliRunner().invoke(cli, [*base, str(FULL), "--set", "cgroupRoot=/custom/"])
    assert res.exit_code == 2
    assert res.output.strip() == "error: --set: cgroupRoot: " + PANIC.format(slice="custom--kubepods.slice")
    scenario = _with_config(tmp_path, cgroupRoot="/custom/")
    res = CliRunner().invoke(cli, [*base, str(scenario)])
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {scenario}: kubeletConfig.cgroupRoot: ")
    # without cgroupsPerQOS no kubepods is appended
    res = CliRunner().invoke(cli, [*base, str(FULL), *NO_QOS, "--cgroup-root", "/custom/"])
    assert res.exit_code == 2
    assert res.output.strip() == "error: --cgroup-root: " + PANIC.format(slice="custom-.slice")
    # the cgroupfs driver drops the empty component
    res = CliRunner().invoke(cli, ["cgroups", "plan", "--driver", "cgroupfs", "--cgroup-version", "2", str(scenario),
                                   "-o", "json"])  # fmt: skip
    assert res.exit_code == 0 and _paths(json.loads(res.output), "node") == ["/custom/kubepods"]


def test_a_kubelet_configuration_file_is_named(tmp_path: Path) -> None:
    doc = yaml.safe_load(FULL.read_text())
    config = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **doc.pop("kubeletConfig")}
    kubelet = tmp_path / "kubelet.yaml"
    doc["kubeletConfigFile"] = "kubelet.yaml"
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(doc, sort_keys=False))
    base = ["cgroups", "plan", str(scenario), "--cgroup-version", "2"]
    kubelet.write_text(yaml.safe_dump({**config, "cgroupRoot": "/custom/"}))
    res = CliRunner().invoke(cli, [*base, "--driver", "systemd"])
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {kubelet}: cgroupRoot: " + PANIC.format(slice="custom--kubepods.slice")
    kubelet.write_text(yaml.safe_dump({**config, "cgroupsPerQOS": False}))
    res = CliRunner().invoke(cli, [*base, "--driver", "cgroupfs"])
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {NO_QOS_REFUSED} ({kubelet}: cgroupsPerQOS)"
    kubelet.write_text(yaml.safe_dump({**config, "cgroupsPerQOS": False, "enforceNodeAllocatable": ["none"],
                                       "cgroupRoot": "/n"}))  # fmt: skip
    res = CliRunner().invoke(cli, [*base, "--driver", "cgroupfs", "-o", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["cgroups"][0]["path"] == "/n"

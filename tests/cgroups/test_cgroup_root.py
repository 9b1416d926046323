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
    # systemd: runc refuses containerd's default path /k8s.io/<id> (the
    # kubelet names no parent): no sandbox or container, and the plan says why
    assert not [c for c in doc["cgroups"] if c["kind"] in ("sandbox", "container")]
    assert any('expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, got '
               '"/k8s.io/<id>" instead' in n for n in doc["notes"])  # fmt: skip
    # cgroupfs: under containerd's default k8s.io/
    doc = _plan(*NO_QOS, "--set", "cgroupRoot=/custom", driver="cgroupfs", version="1")
    containers = [c for c in doc["cgroups"] if c["kind"] == "container"]
    assert len(containers) == 3 and all(c["path"].startswith("/k8s.io/") for c in containers)
    g = next(c for c in containers if c["podUID"] == G)
    assert g["files"]["cpuset.cpus"] == "1,5" and g["files"]["memory.limit_in_bytes"] == "1073741824"
    assert "notes" not in doc


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


# -- the configuration is validated before the cgroup root is read ------------------


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_configuration_refused_before_the_root(tmp_path: Path, command: str) -> None:
    # server.go: ValidateKubeletConfiguration (NewKubeletCommand) long before
    # NodeAllocatableRoot (run): the invalid configuration is what stops it
    extra = ["--root", str(tmp_path), "--dry-run"] if command == "apply" else []
    res = CliRunner().invoke(cli, ["cgroups", command, str(FULL), "--driver", "systemd", "--cgroup-version", "2",
                                   "--set", "cgroupsPerQOS=false", "--cgroup-root", "/a//b", *extra])  # fmt: skip
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {NO_QOS_REFUSED} (--set: cgroupsPerQOS)"


# -- a root of slashes only: a name the kubelet updates, at "/" ----------------------


@pytest.mark.parametrize("driver", ["cgroupfs", "systemd"])
@pytest.mark.parametrize("version", ["2", "1"])
def test_no_qos_root_of_slashes_is_updated_at_the_root(driver: str, version: str) -> None:
    # ParseCgroupfsToCgroupName("//") is ["", ""]: not empty, so
    # enforceNodeAllocatableCgroups updates it; ToCgroupfs "/", ToSystemd
    # ExpandSlice("-.slice") "/"
    for how in (("--cgroup-root", "//"), ("--set", "cgroupRoot=//")):
        doc = _plan(*NO_QOS, *how, driver=driver, version=version)
        roots = [c for c in doc["cgroups"] if c["kind"] == "root" and c["writer"] == "kubelet"]
        assert [c["path"] for c in roots] == ["/"]
        memory = "memory.max" if version == "2" else "memory.limit_in_bytes"
        assert roots[0]["files"][memory] == CAPACITY_MEMORY
    # "/" is the empty name: nothing written
    doc = _plan(*NO_QOS, "--cgroup-root", "/", driver=driver, version=version)
    assert [c for c in doc["cgroups"] if c["kind"] == "root" and c["writer"] == "kubelet"] == []


def test_no_qos_root_of_slashes_apply(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["cgroups", "apply", str(FULL), "--driver", "systemd", "--cgroup-version", "2",
                                   "--root", str(tmp_path), *NO_QOS, "--cgroup-root", "//"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (tmp_path / "memory.max").read_text().strip() == CAPACITY_MEMORY
    # (systemd without cgroupsPerQOS: no container can start, none is made)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == []


def test_three_slashes_still_panic_under_systemd() -> None:
    res = CliRunner().invoke(cli, ["cgroups", "plan", str(FULL), "--driver", "systemd", "--cgroup-version", "2",
                                   *NO_QOS, "--cgroup-root", "///"])  # fmt: skip
    assert res.exit_code == 2
    assert "invalid slice name: --.slice" in res.output


# -- the no-QoS layout's stale container cgroups -------------------------------------


@pytest.mark.parametrize("driver", ["cgroupfs"])  # (systemd: no container starts without a parent)
def test_no_qos_apply_removes_containers_of_pods_that_left(tmp_path: Path, driver: str) -> None:
    args = ["cgroups", "apply", str(FULL), "--driver", driver, "--cgroup-version", "2", "--root", str(tmp_path),
            *NO_QOS, "--set", "cgroupRoot=/c"]  # fmt: skip
    res = CliRunner().invoke(cli, [*args, "--step", "2"])
    assert res.exit_code == 0, res.output
    runtime = tmp_path / "k8s.io"
    assert len(list(runtime.iterdir())) == 6
    # what is not a container cgroup of the plans' form is never touched
    (runtime / "other").mkdir()
    (runtime / ("f" * 64)).mkdir()
    (runtime / ("f" * 64) / "foreign").write_text("x")
    dry = CliRunner().invoke(cli, [*args, "--step", "0", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert dry.output.count("rmdir k8s.io/") == 4
    res = CliRunner().invoke(cli, [*args, "--step", "0"])
    assert res.exit_code == 0, res.output
    assert "removed 4 cgroups" in res.output
    assert "stale k8s.io/" + "f" * 64 in res.output
    left = sorted(p.name for p in runtime.iterdir())
    assert "other" in left and "f" * 64 in left and len(left) == 4
    # --keep-stale: reported, not removed
    CliRunner().invoke(cli, [*args, "--step", "2"])
    res = CliRunner().invoke(cli, [*args, "--step", "0", "--keep-stale"])
    assert res.exit_code == 0, res.output
    assert len([p for p in runtime.iterdir() if len(p.name) == 64]) == 7


# -- a systemd root whose own slice names are too long --------------------------------

LONG = "/" + "d" * 200 + "/" + "d" * 200
TOO_LONG = ("cgroup root '/ddddddddddddddddddddddddddddddddddddddd...dddddddddddd': cgroup name "
            "'dddddddddddddddddddddddddddddddddddddddd...dddddd.slice' is {n} bytes long; the kernel's limit for a "
            "name is 255 bytes")  # fmt: skip


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_systemd_root_too_long_is_the_fields(tmp_path: Path, command: str) -> None:
    extra = ["--root", str(tmp_path), "--dry-run"] if command == "apply" else []
    base = ["cgroups", command, "--driver", "systemd", "--cgroup-version", "2", *extra]
    res = CliRunner().invoke(cli, [*base, str(FULL), "--set", f"cgroupRoot={LONG}"])
    assert res.exit_code == 2
    assert res.output.strip() == "error: --set: cgroupRoot: " + TOO_LONG.format(n=407)
    res = CliRunner().invoke(cli, [*base, str(FULL), "--cgroup-root", LONG])
    assert res.output.strip() == "error: --cgroup-root: " + TOO_LONG.format(n=407)
    res = CliRunner().invoke(cli, [*base, str(FULL), *NO_QOS, "--cgroup-root", LONG])
    assert res.output.strip() == "error: --cgroup-root: " + TOO_LONG.format(n=407)
    if command == "plan":  # (apply: tmp_path is the root, left empty)
        scenario = _with_config(tmp_path, cgroupRoot=LONG)
        res = CliRunner().invoke(cli, [*base, str(scenario)])
        assert res.output.startswith(f"error: {scenario}: kubeletConfig.cgroupRoot: " + TOO_LONG.format(n=407))
    # only kubepods pushes it over: the kubepods slice is named
    root = "/" + "d" * 241
    res = CliRunner().invoke(cli, [*base, str(FULL), "--cgroup-root", root])
    assert res.exit_code == 2 and res.output.startswith("error: --cgroup-root: ")
    assert "...bepods.slice' is 256 bytes long" in res.output  # (the kubepods slice)
    ok = CliRunner().invoke(cli, [*base, str(FULL), *NO_QOS, "--cgroup-root", root])
    assert ok.exit_code == 0, ok.output
    # cgroupfs names each component on its own
    res = CliRunner().invoke(cli, ["cgroups", "plan", "--driver", "cgroupfs", "--cgroup-version", "2", str(FULL),
                                   "--cgroup-root", LONG])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert list(tmp_path.iterdir()) == [] or command == "plan"


# -- "." and ".." in the root, as the kubelet reads them -------------------------------


@pytest.mark.parametrize(
    ("root", "driver", "node"),
    [
        ("/a/./b", "cgroupfs", "/a/b/kubepods"),
        ("/custom/..", "cgroupfs", "/kubepods"),
        ("./a", "cgroupfs", "/a/kubepods"),
        ("/a/b/../c", "cgroupfs", "/a/c/kubepods"),
        ("/a/./b", "systemd", "/a.slice/a-..slice/a-.-b.slice/a-.-b-kubepods.slice"),
        ("/custom/..", "systemd", "/custom.slice/custom-...slice/custom-..-kubepods.slice"),
        ("/..", "systemd", "/...slice/..-kubepods.slice"),
        ("./a-b", "systemd", "/..slice/.-a_b.slice/.-a_b-kubepods.slice"),
    ],
)  # fmt: skip
def test_dot_components_follow_the_kubelet(tmp_path: Path, root: str, driver: str, node: str) -> None:
    for how in (("--cgroup-root", root), ("--set", f"cgroupRoot={root}")):
        doc = _plan(*how, driver=driver)
        assert _paths(doc, "node") == [node]
    # and the apply stays under its root
    res = CliRunner().invoke(cli, ["cgroups", "apply", str(FULL), "--driver", driver, "--cgroup-version", "2",
                                   "--root", str(tmp_path), "--cgroup-root", root])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (tmp_path / node.lstrip("/")).is_dir()
    for line in res.output.splitlines():
        if line.startswith(("mkdir ", "write ")):
            assert ".." not in line.split()[1].split("/"), line


@pytest.mark.parametrize("root", ["/..", "..", "/../x", "/a/../.."])
def test_cgroupfs_root_above_the_root_is_refused(tmp_path: Path, root: str) -> None:
    res = CliRunner().invoke(cli, ["cgroups", "apply", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2",
                                   "--root", str(tmp_path), "--cgroup-root", root])  # fmt: skip
    assert res.exit_code == 2
    assert "names a cgroup above the cgroup root" in res.output and res.output.startswith("error: --cgroup-root: ")
    assert list(tmp_path.iterdir()) == []


def test_no_qos_dot_root_is_the_root_itself() -> None:
    # cgroupfs: ToCgroupfs(["."]) is "/." -- the root, updated
    doc = _plan(*NO_QOS, "--cgroup-root", "/.")
    assert [c["path"] for c in doc["cgroups"] if c["kind"] == "root" and c["writer"] == "kubelet"] == ["/"]
    doc = _plan(*NO_QOS, "--cgroup-root", "/.", driver="systemd")
    assert [c["path"] for c in doc["cgroups"] if c["kind"] == "root" and c["writer"] == "kubelet"] == ["/..slice"]


# -- system-reserved / kube-reserved enforcement: planned, never created -----------------

RESERVED = ("--set", "reservedSystemCPUs=", "--set", "kubeReserved.cpu=1",
            "--set", "systemReservedCgroup=/system.slice", "--set", "kubeReservedCgroup=/kube.slice")  # fmt: skip


def test_reserved_cgroups_are_planned_and_said_to_be_needed() -> None:
    doc = _plan(*RESERVED, "--set", "enforceNodeAllocatable=[pods,system-reserved,kube-reserved-compressible]")
    reserved = {c["path"]: c for c in doc["cgroups"] if c["kind"] == "reserved"}
    assert list(reserved) == ["/system.slice", "/kube.slice"]
    assert {c["writer"] for c in reserved.values()} == {"kubelet"}
    # full form: (no CPU reserved here) memory, memory.min (MemoryQoS), huge
    # pages limited to 0; compressible: the shares (and the zeroed huge pages)
    assert reserved["/system.slice"]["files"] == {
        "memory.max": str(924 << 20), "memory.min": str(924 << 20),
        "hugetlb.2MB.max": "0", "hugetlb.2MB.rsvd.max": "0"}  # fmt: skip
    assert reserved["/kube.slice"]["files"] == {"cpu.weight": "39", "hugetlb.2MB.max": "0", "hugetlb.2MB.rsvd.max": "0"}
    notes = doc["notes"]
    assert len(notes) == 2
    assert notes[0].startswith("systemReservedCgroup '/system.slice' (system-reserved in enforceNodeAllocatable): "
                               "the kubelet updates it with systemReserved's values at start")  # fmt: skip
    assert "does not start if it does not exist" in notes[0]
    assert notes[1].startswith("kubeReservedCgroup '/kube.slice' (kube-reserved-compressible in ")
    assert "kubeReserved's CPU shares" in notes[1]
    # the default enforcement: no reserved cgroup, no notes
    default = _plan(*RESERVED)
    assert "notes" not in default and not [c for c in default["cgroups"] if c["kind"] == "reserved"]
    # the table says it too
    res = CliRunner().invoke(cli, ["cgroups", "plan", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2",
                                   *RESERVED, "--set", "enforceNodeAllocatable=[pods,system-reserved]"])
    assert res.exit_code == 0, res.output
    assert "/system.slice   [reserved (must exist; updated, never created); kubelet]" in res.output
    assert res.output.rstrip().splitlines()[-1] == f"note: {notes[0]}"


def test_systemd_reads_the_reserved_names_last_element() -> None:
    doc = _plan(*RESERVED, "--set", "systemReservedCgroup=/system.slice/node-extra.slice",
                "--set", "enforceNodeAllocatable=[pods,system-reserved]", driver="systemd")
    assert [c["path"] for c in doc["cgroups"] if c["kind"] == "reserved"] == ["/node.slice/node-extra.slice"]
    assert "(the systemd driver reads it as the slice /node.slice/node-extra.slice" in doc["notes"][0]


def test_reserved_start_failures_are_located() -> None:
    res = CliRunner().invoke(cli, ["cgroups", "plan", str(FULL), "--driver", "systemd", "--cgroup-version", "2",
                                   *RESERVED, "--set", "systemReservedCgroup=/",
                                   "--set", "enforceNodeAllocatable=[pods,system-reserved]"])
    assert res.exit_code == 2
    assert res.output.startswith("error: --set: systemReservedCgroup: '/': the kubelet with the systemd driver would "
                                 "panic at start (ToSystemd: ExpandSlice: invalid slice name: /.slice)")  # fmt: skip


def _reserved_plan(version: int) -> Any:
    from podnuma.cgroups import plan_cgroups
    from podnuma.inputs.overrides import parse_overrides
    from podnuma.inputs.text import TextInput
    from podnuma.service.scenario import load

    sets = [a for a in RESERVED if a != "--set"] + ["enforceNodeAllocatable=[pods,system-reserved]"]
    scenario = load(TextInput.read(FULL, what="scenario"), overrides=parse_overrides(tuple(sets)))
    return plan_cgroups(scenario, driver="cgroupfs", version=version)


@pytest.mark.parametrize("version", [2, 1])
def test_apply_refuses_a_missing_reserved_cgroup_before_any_write(tmp_path: Path, version: int) -> None:
    from podnuma.cgroups import apply_plan
    from podnuma.errors import InputError

    plan = _reserved_plan(version)
    with pytest.raises(InputError) as err:
        apply_plan(plan, tmp_path)
    assert "the reserved cgroup /system.slice " in err.value.message
    assert "the kubelet does not start without it" in err.value.message
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing created


@pytest.mark.parametrize("version", [2, 1])
def test_apply_updates_an_existing_reserved_cgroup_and_never_removes_it(tmp_path: Path, version: int) -> None:
    from podnuma.cgroups import apply_plan, remove_plan

    plan = _reserved_plan(version)
    node = next(n for n in plan.nodes if n.kind == "reserved")
    dirs = [tmp_path / "system.slice"] if version == 2 else [
        tmp_path / c / "system.slice" for c in sorted({f.controller for f in node.files} | {"cpuset"})]
    for d in dirs:
        d.mkdir(parents=True)
    report = apply_plan(plan, tmp_path)
    assert not [op for op in report.operations if op.action == "mkdir" and "system.slice" in op.path]
    memory = tmp_path / ("system.slice/memory.max" if version == 2 else "memory/system.slice/memory.limit_in_bytes")
    assert memory.read_text().strip() == str(924 << 20)
    hugetlb = "system.slice/hugetlb.2MB.max" if version == 2 else "hugetlb/system.slice/hugetlb.2MB.limit_in_bytes"
    assert (tmp_path / hugetlb).read_text().strip() == "0"
    remove_plan(plan, tmp_path)
    assert all(d.is_dir() for d in dirs)
    assert not (tmp_path / ("kubepods" if version == 2 else "cpu/kubepods")).exists()


def test_no_qos_prune_leaves_guarded_containers(tmp_path: Path) -> None:
    # pods the kubelet has but the plan does not hold (running since before
    # the start): their container cgroups are left
    import dataclasses

    from podnuma.cgroups import apply_plan, plan_cgroups
    from podnuma.inputs.overrides import parse_overrides
    from podnuma.inputs.text import TextInput
    from podnuma.service.scenario import load

    scenario = load(TextInput.read(FULL, what="scenario"),
                    overrides=parse_overrides(("cgroupsPerQOS=false", "enforceNodeAllocatable=[]")))  # fmt: skip
    plan = plan_cgroups(scenario, step=0, driver="cgroupfs", version=2)
    kept, gone = "a" * 64, "b" * 64
    for name in (kept, gone):
        (tmp_path / "k8s.io" / name).mkdir(parents=True)
    report = apply_plan(dataclasses.replace(plan, guarded=(kept,)), tmp_path)
    assert (tmp_path / "k8s.io" / kept).is_dir() and not (tmp_path / "k8s.io" / gone).exists()
    assert [op.path for op in report.operations if op.action == "rmdir"] == [f"k8s.io/{gone}"]


def test_a_reserved_cgroup_the_kubelet_manages_is_not_refused(tmp_path: Path) -> None:
    # kubepods exists when the enforcement runs (setupNode makes it first):
    # apply makes it as the kubelet does, then writes the reserved values
    args = ["--set", "reservedSystemCPUs=", "--set", "kubeReserved.cpu=1",
            "--set", "kubeReservedCgroup=/kubepods",
            "--set", "enforceNodeAllocatable=[pods,kube-reserved]"]  # fmt: skip
    doc = _plan(*args)
    assert [c["path"] for c in doc["cgroups"] if c["kind"] == "reserved"] == ["/kubepods"]
    assert any(n.startswith("the reserved cgroup /kubepods is one the kubelet itself manages") for n in doc["notes"])
    res = CliRunner().invoke(cli, ["cgroups", "apply", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2",
                                   "--root", str(tmp_path), *args])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (tmp_path / "kubepods/cpu.weight").read_text().strip() == "39"  # (kubeReserved's, written last)


@pytest.mark.parametrize(("driver", "name"), [("systemd", "-.slice"), ("cgroupfs", "/")])
def test_a_reserved_cgroup_at_the_root_stops_the_kubelet(driver: str, name: str) -> None:
    res = CliRunner().invoke(cli, ["cgroups", "plan", str(FULL), "--driver", driver, "--cgroup-version", "2",
                                   *RESERVED, "--set", f"systemReservedCgroup={name}",
                                   "--set", "enforceNodeAllocatable=[pods,system-reserved]"])  # fmt: skip
    assert res.exit_code == 2
    assert ("the kubelet would not start: Failed to enforce System Reserved Cgroup Limits on "
            f'"{name}": the cgroup hierarchy\'s root cannot be updated') in res.output

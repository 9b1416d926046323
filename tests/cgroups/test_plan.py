"""``podnuma.cgroups.plan``: the formulas, the tree for both drivers and
both versions, written to a temporary directory and read back, and names
that could leave the root."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import parse_quantity
from podnuma.cgroups import (
    CgroupPlan,
    NodeFacts,
    PlannedPod,
    apply_plan,
    plan_cgroups,
    plan_from_pods,
)
from podnuma.cgroups.plan import (
    hugepage_unit,
    is_written_file,
    kubelet_cpu_weight,
    milli_cpu_to_quota,
    milli_cpu_to_shares,
    runc_cpu_weight,
    systemd_path,
)
from podnuma.cm.results import ContainerResult
from podnuma.errors import InputError
from podnuma.inputs.scenario import load_scenario, load_scenario_text
from podnuma.machine.cpuset import CPUSet

HERE = Path(__file__).parent
FULL = HERE / "full.yaml"
G, B, BE = (f"11111111-aaaa-bbbb-cccc-00000000000{i}" for i in (1, 2, 3))


# ----------------------------------------------------------------- formulas

# (milliCPU, shares, kubelet's linear weight, runc's quadratic weight): the
# table of the kubelet's MilliCPUToShares / getCPUWeight and runc's converter
FORMULAS = [
    (0, 2, 1, 1),
    (1, 2, 1, 1),
    (100, 102, 4, 17),
    (500, 512, 20, 59),
    (1000, 1024, 39, 100),
    (4000, 4096, 157, 303),
    (64000, 65536, 2500, 3023),
]


@pytest.mark.parametrize(("milli", "shares", "linear", "quadratic"), FORMULAS)
def test_shares_and_weights(milli: int, shares: int, linear: int, quadratic: int) -> None:
    assert milli_cpu_to_shares(milli) == shares
    assert kubelet_cpu_weight(shares) == linear
    assert runc_cpu_weight(shares) == quadratic


def test_weight_and_quota_bounds() -> None:
    assert milli_cpu_to_shares(10**9) == 262144
    assert kubelet_cpu_weight(262144) == runc_cpu_weight(262144) == 10000
    assert runc_cpu_weight(0) == 0
    assert milli_cpu_to_quota(0) == 0
    assert milli_cpu_to_quota(5) == 1000  # at least 1 ms
    assert milli_cpu_to_quota(1500) == 150000


def test_names() -> None:
    assert hugepage_unit(2 << 20) == "2MB" and hugepage_unit(1 << 30) == "1GB"
    assert hugepage_unit(64 << 10) == "64KB"
    assert systemd_path(["kubepods", "burstable", "poda-b"]) == (
        "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda_b.slice"
    )


# --------------------------------------------------------------------- tree


def _plan(driver: str, version: int) -> CgroupPlan:
    return plan_cgroups(load_scenario(FULL), driver=driver, version=version)  # type: ignore[arg-type]


def _paths(driver: str) -> dict[str, str]:
    if driver == "cgroupfs":
        return {
            "kubepods": "kubepods",
            "burstable": "kubepods/burstable",
            "besteffort": "kubepods/besteffort",
            "g": f"kubepods/pod{G}",
            "b": f"kubepods/burstable/pod{B}",
            "be": f"kubepods/besteffort/pod{BE}",
        }
    u = {k: v.replace("-", "_") for k, v in (("g", G), ("b", B), ("be", BE))}
    return {
        "kubepods": "kubepods.slice",
        "burstable": "kubepods.slice/kubepods-burstable.slice",
        "besteffort": "kubepods.slice/kubepods-besteffort.slice",
        "g": f"kubepods.slice/kubepods-pod{u['g']}.slice",
        "b": f"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{u['b']}.slice",
        "be": f"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{u['be']}.slice",
    }


GI = 1 << 30
HP = "hugetlb.2MB"
# capacity 8 CPUs / 16Gi / 1Gi of 2Mi pages; reservedSystemCPUs 0 -> 7 CPUs;
# systemReserved 924Mi -> 16210984960 bytes
EXPECTED = {
    2: {
        "kubepods": {
            "cpu.weight": "274", "memory.max": "16210984960", f"{HP}.max": str(1 << 62), "memory.min": "0",
            "memory.low": "0",
        },
        "burstable": {"cpu.weight": "20", f"{HP}.max": str(1 << 62), "memory.low": "0"},
        "besteffort": {"cpu.weight": "1", f"{HP}.max": str(1 << 62)},
        "g": {"cpu.weight": "79", "cpu.max": "max 100000", "memory.max": str(GI), f"{HP}.max": str(64 << 20)},
        "b": {"cpu.weight": "20", "cpu.max": "100000 100000", "memory.max": str(512 << 20), f"{HP}.max": "0"},
        "be": {"cpu.weight": "1", f"{HP}.max": "0"},
        "g/app": {
            "cpuset.mems": "0", "cpuset.cpus": "1,5", "cpu.weight": "174", "cpu.max": "max 100000",
            "memory.max": str(GI), f"{HP}.max": str(64 << 20), "memory.min": "0", "memory.low": "0",
            "memory.oom.group": "1",
        },
        "b/app": {
            "cpuset.cpus": "0,2-4,6-7", "cpu.weight": "59", "cpu.max": "100000 100000",
            "memory.max": str(512 << 20), f"{HP}.max": "0", "memory.min": "0", "memory.low": "0",
            "memory.oom.group": "1",
        },
        "be/app": {
            "cpuset.cpus": "0,2-4,6-7", "cpu.weight": "1", "cpu.max": "max 100000", f"{HP}.max": "0",
            "memory.min": "0", "memory.low": "0", "memory.oom.group": "1",
        },
    },
    1: {
        # hugetlb: the QoS manager's update of kubepods as the Guaranteed tier (unbounded)
        "kubepods": {"cpu.shares": "7168", "memory.limit_in_bytes": "16210984960", f"{HP}.limit_in_bytes": str(1 << 62)},
        "burstable": {"cpu.shares": "512", f"{HP}.limit_in_bytes": str(1 << 62)},
        "besteffort": {"cpu.shares": "2", f"{HP}.limit_in_bytes": str(1 << 62)},
        "g": {
            "cpu.shares": "2048", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "-1",
            "memory.limit_in_bytes": str(GI), f"{HP}.limit_in_bytes": str(64 << 20),
        },
        "b": {
            "cpu.shares": "512", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "100000",
            "memory.limit_in_bytes": str(512 << 20), f"{HP}.limit_in_bytes": "0",
        },
        "be": {"cpu.shares": "2", f"{HP}.limit_in_bytes": "0"},
        "g/app": {
            "cpuset.mems": "0", "cpuset.cpus": "1,5", "cpu.shares": "2048", "cpu.cfs_period_us": "100000",
            "cpu.cfs_quota_us": "-1", "memory.limit_in_bytes": str(GI), f"{HP}.limit_in_bytes": str(64 << 20),
        },
        "b/app": {
            "cpuset.cpus": "0,2-4,6-7", "cpu.shares": "512", "cpu.cfs_period_us": "100000",
            "cpu.cfs_quota_us": "100000", "memory.limit_in_bytes": str(512 << 20), f"{HP}.limit_in_bytes": "0",
        },
        "be/app": {"cpuset.cpus": "0,2-4,6-7", "cpu.shares": "2", "cpu.cfs_period_us": "100000", f"{HP}.limit_in_bytes": "0"},
    },
}  # fmt: skip


def _by_key(plan: CgroupPlan, driver: str) -> dict[str, dict[str, str]]:
    paths = {v: k for k, v in _paths(driver).items()}
    out: dict[str, dict[str, str]] = {}
    for node in plan.nodes:
        files = {f.name: f.value for f in node.files if not f.optional}
        if node.path in paths:
            out[paths[node.path]] = files
        elif node.kind == "container":
            parent = paths[node.path.rpartition("/")[0]]
            out[f"{parent}/{node.container}"] = files
        else:
            assert node.kind == "sandbox" and not node.files
    return out


@pytest.mark.parametrize("version", [2, 1])
@pytest.mark.parametrize("driver", ["systemd", "cgroupfs"])
def test_full_tree(driver: str, version: int, tmp_path: Path) -> None:
    plan = _plan(driver, version)
    assert _by_key(plan, driver) == EXPECTED[version]
    # parents before children
    seen: set[str] = set()
    for node in plan.nodes:
        parent = node.path.rpartition("/")[0]
        assert not parent or parent in seen, node.path
        seen.add(node.path)
    containers = [n for n in plan.nodes if n.kind == "container"]
    suffix = ".scope" if driver == "systemd" else ""
    prefix = "cri-containerd-" if driver == "systemd" else ""
    assert all(n.path.rpartition("/")[2] == f"{prefix}{n.container_id}{suffix}" for n in containers)

    # written to a plain directory, every value reads back where it belongs
    report = apply_plan(plan, tmp_path)
    assert not report.cgroupfs
    for node in plan.nodes:
        for f in node.files:
            where = tmp_path / (f.controller if version == 1 else "") / node.path / f.name
            if f.optional:
                assert not where.exists()
            else:
                assert where.read_text().strip() == f.value, where
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert len(written) == sum(1 for n in plan.nodes for f in n.files if not f.optional)


def test_step_option_and_range() -> None:
    scenario = load_scenario(FULL)
    plan = plan_cgroups(scenario, step=0, driver="cgroupfs", version=2)
    assert [n.pod for n in plan.nodes if n.kind == "pod"] == ["t/g"]
    with pytest.raises(InputError, match=r"--step 3: no such step \(the scenario has steps 0-2\)"):
        plan_cgroups(scenario, step=3, driver="cgroupfs", version=2)
    # no steps: --step said as topology and explain say it; without it, the
    # scenario's own problem, at its field
    empty = load_scenario_text(FULL.read_text().split("\nsteps:")[0] + "\nsteps: []\n", name="e.yaml",
                               base_dir=HERE)
    with pytest.raises(InputError, match=r"e.yaml: --step 0: no such step \(the scenario has no steps\)$"):
        plan_cgroups(empty, step=0, driver="cgroupfs", version=2)
    with pytest.raises(InputError, match=r"the scenario has no steps$") as e:
        plan_cgroups(empty, driver="cgroupfs", version=2)
    assert e.value.path == "steps"


def test_none_policy_writes_kubepods_cpuset_and_no_container_cpuset() -> None:
    text = FULL.read_text().replace("cpuManagerPolicy: static", "cpuManagerPolicy: none").replace(
        '  reservedSystemCPUs: "0"\n', ""
    )
    plan = plan_cgroups(load_scenario_text(text, name="none.yaml", base_dir=HERE), driver="cgroupfs", version=2)
    kubepods = plan.node("kubepods")
    assert kubepods.files[0].name == "cpuset.cpus" and kubepods.files[0].value == "0-7"
    for node in plan.nodes:
        if node.kind == "container":
            assert "cpuset.cpus" not in {f.name for f in node.files}


ONE_CPU = """\
apiVersion: podnuma.io/v1
kind: Scenario
node:
  synthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 1, threadsPerCore: 1, memoryPerNumaNode: 8Gi}
kubeletConfig:
  cpuManagerPolicy: static
  kubeReserved: {cpu: %s}
steps:
- addPod:
    metadata: {name: p, namespace: ns, uid: uid-p}
    spec:
      containers:
      - name: c
        resources: {limits: {cpu: 100m, memory: 64Mi}}
"""


@pytest.mark.parametrize(("reserved", "cpus"), [("500m", "0"), ("'1'", "0")])
@pytest.mark.parametrize("version", [2, 1])
def test_static_policy_with_every_cpu_reserved_writes_kubepods_cpuset(reserved: str, cpus: str, version: int) -> None:
    """The kubelet gives kubepods every CPU when the CPU manager has no
    allocatable CPUs; under ``static`` that is a reservation of every CPU."""
    scenario = load_scenario_text(ONE_CPU % reserved, name="one-cpu.yaml", base_dir=HERE)
    kubepods = plan_cgroups(scenario, driver="cgroupfs", version=version).node("kubepods")
    assert {f.name: f.value for f in kubepods.files}.get("cpuset.cpus") == cpus


def test_static_policy_with_allocatable_cpus_leaves_kubepods_cpuset_alone() -> None:
    kubepods = plan_cgroups(load_scenario(FULL), driver="cgroupfs", version=2).node("kubepods")
    assert "cpuset.cpus" not in {f.name for f in kubepods.files}


# -------------------------------------------------------------- hostile names


def _hostile_plan(uid: str, name: str, container: str, driver: str, version: int) -> CgroupPlan:
    """Pods handed to the API directly (as the agent does), unvalidated."""
    pod = Pod(
        uid=uid,
        name=name,
        namespace=name,
        containers=(Container(name=container, kind="app", limits={"cpu": parse_quantity("1")}),),
    )
    result = ContainerResult(container, "app", CPUSet.parse("1"), (0,), "container", cpu_quota_disabled=True)
    facts = NodeFacts(
        all_cpus=CPUSet.parse("0-3"), cpu_manager_policy="static", allocatable={},
        hugepage_sizes=(), pod_level_resources=True, memory_qos=True,
    )  # fmt: skip
    return plan_from_pods(
        {uid: PlannedPod(pod, "Guaranteed", (result,))}, facts, driver=driver, version=version  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("uid", ["../../../etc", "a/b", "x_y", "a\x00b", "ok\n"])
def test_hostile_uid_is_refused(uid: str) -> None:
    with pytest.raises(InputError) as info:
        _hostile_plan(uid, "p", "c", "cgroupfs", 2)
    assert info.value.path == "metadata.uid"


@pytest.mark.parametrize("version", [2, 1])
@pytest.mark.parametrize("driver", ["systemd", "cgroupfs"])
def test_hostile_names_stay_inside_the_root(driver: str, version: int, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    evil = "../../../../etc/evil"
    for uid in ("..", ".", "-", "1234-.."):
        plan = _hostile_plan(uid, evil, evil, driver, version)
        apply_plan(plan, root)
        for node in plan.nodes:
            assert ".." not in node.path.split("/") and "evil" not in node.path
    outside = [p for p in tmp_path.rglob("*") if root not in p.parents and p != root]
    assert outside == []
    assert not any("evil" in p.name for p in root.rglob("*"))


def test_bad_cgroup_root_component() -> None:
    with pytest.raises(InputError, match="cgroup root component '..'"):
        plan_cgroups(load_scenario(FULL), driver="cgroupfs", version=2, cgroup_root=("..",))


def test_pods_known_only_from_a_checkpoint_are_listed_unplanned() -> None:
    from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, cpu_checkpoint_object

    ckpt = CPUCheckpointData("static", CPUSet.parse("0,3-15"), {"uid-old": {"app": CPUSet.parse("1-2")}})
    doc = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 8,
                               "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
        "state": {"cpuManager": cpu_checkpoint_object(ckpt)},
        "steps": [{"addPod": {"metadata": {"name": "new", "uid": "uid-new"}, "spec": {"containers": [
            {"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}}],
    }  # fmt: skip
    import yaml

    scenario = load_scenario_text(yaml.safe_dump(doc), name="ckpt.yaml", base_dir=HERE)
    plan = plan_cgroups(scenario, driver="cgroupfs", version=2)
    assert plan.unplanned == ("uid-old",)
    assert [n.pod_uid for n in plan.nodes if n.kind == "pod"] == ["uid-new"]
    (container,) = [n for n in plan.nodes if n.kind == "container"]
    assert container.cpus is not None and not container.cpus.intersection(CPUSet.parse("1-2"))


# ------------------------------------------- found by the kubelet oracle (docs/oracle.md)

EXAMPLES = HERE.parents[1] / "examples"


def test_every_v2_container_asks_for_no_swap() -> None:
    """The kubelet puts memory.swap.max 0 into every container's unified
    resources where swap is controlled, memory limit or not (v2 only)."""
    for version, driver in ((2, "systemd"), (1, "cgroupfs")):
        plan = _plan(driver, version)
        for node in (n for n in plan.nodes if n.kind == "container"):
            files = {f.name: f for f in node.files}
            if version == 2:
                assert files["memory.swap.max"].value == "0" and files["memory.swap.max"].optional, node.path
            else:
                has_limit = "memory.limit_in_bytes" in files
                assert ("memory.memsw.limit_in_bytes" in files) == has_limit, node.path


def test_pod_quota_is_decided_when_the_pod_starts() -> None:
    """lifecycle.yaml: pod "fresh" (pod scope, c1 exclusive, c2 and c3 in
    the pod's shared pool) keeps its CPU quota after its containers stop one
    by one (steps 2-4): the kubelet decides it once, when it creates the pod
    cgroup."""
    scenario = load_scenario(EXAMPLES / "pod-level" / "lifecycle.yaml")
    assert [s.op for s in scenario.steps[2:5]] == ["removeContainer"] * 3
    plan = plan_cgroups(scenario, step=4, driver="cgroupfs", version=2)
    (fresh,) = [n for n in plan.nodes if n.kind == "pod" and n.pod == "lifecycle/fresh"]
    assert {f.name: f.value for f in fresh.files}["cpu.max"] == "400000 100000"
    assert not [n for n in plan.nodes if n.kind == "container" and n.pod == "lifecycle/fresh"]


def test_a_pod_rejected_at_readmission_is_not_unplanned() -> None:
    """lifecycle.yaml: the restored pod is admitted again and rejected; a
    rejected pod is killed, so it has no cgroups at all."""
    plan = plan_cgroups(load_scenario(EXAMPLES / "pod-level" / "lifecycle.yaml"), driver="cgroupfs", version=2)
    assert plan.unplanned == ()


def test_shared_container_keeps_its_cpuset_when_the_shared_pool_empties() -> None:
    """The reconcile loop skips an empty shared pool: a shared container
    keeps the cpuset it was created with."""
    import yaml

    doc = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                               "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
                          "cpuManagerPolicyOptions": {"strict-cpu-reservation": "true"}},
        "steps": [
            {"addPod": {"metadata": {"name": "shared", "uid": "uid-shared"},
                        "spec": {"containers": [{"name": "app"}]}}},
            {"addPod": {"metadata": {"name": "all", "uid": "uid-all"}, "spec": {"containers": [
                {"name": "app", "resources": {"limits": {"cpu": "3", "memory": "1Gi"}}}]}}},
        ],
    }  # fmt: skip
    scenario = load_scenario_text(yaml.safe_dump(doc), name="empty-pool.yaml", base_dir=HERE)
    plan = plan_cgroups(scenario, driver="cgroupfs", version=2)
    cpus = {n.pod: n.cpus for n in plan.nodes if n.kind == "container"}
    assert cpus == {"default/shared": CPUSet.parse("1-3"), "default/all": CPUSet.parse("1-3")}


# ------------------------------------------- the files a plan writes

#: every kind of file a pod or container cgroup can get: pids.max, MemoryQoS
EVERY_FILE = """  podPidsLimit: 1024
  featureGates: {MemoryQoS: true}
  memoryThrottlingFactor: 0.9
  memoryReservationPolicy: TieredReservation
"""


@pytest.mark.parametrize("settings", ["", EVERY_FILE], ids=["defaults", "every-file"])
@pytest.mark.parametrize(("driver", "version"), [("systemd", 2), ("cgroupfs", 2), ("systemd", 1), ("cgroupfs", 1)])
def test_every_file_a_plan_writes_is_one_podnuma_may_delete(driver: str, version: int, settings: str) -> None:
    """On a plain directory the apply deletes only the files of these
    names (``is_written_file``): every file of every plan must be one."""
    text = FULL.read_text().replace("kubeletConfig:\n", "kubeletConfig:\n" + settings, 1)
    plan = plan_cgroups(load_scenario_text(text, name="every.yaml", base_dir=HERE),
                        driver=driver, version=version)  # type: ignore[arg-type]  # fmt: skip
    names = {f.name for n in plan.nodes for f in n.files} | {"cgroup.procs"}  # (attach)
    if settings:
        assert "pids.max" in names and (version == 1 or {"memory.min", "memory.low", "memory.high"} <= names)
    assert [n for n in sorted(names) if not is_written_file(n, version)] == []


def test_no_other_file_is_podnumas() -> None:
    for name in ("notes.txt", "cgroup.controllers", "cgroup.subtree_control", "cpu.weight.bak",
                 "hugetlb.2MB.max\n", "hugetlb.MB.max", "hugetlb.2MB.limit_in_bytes", ".cpu.weight", "tasks"):
        assert not is_written_file(name, 2), name
    assert not is_written_file("cpu.weight", 1) and not is_written_file("cpu.shares", 2)
    assert is_written_file("hugetlb.1GB.rsvd.max", 2) and is_written_file("hugetlb.64KB.limit_in_bytes", 1)

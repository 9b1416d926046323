"""A real cgroup: plan a pinned pod on this machine, apply it under a
throw-away cgroup, move a sleeping process in and read back what the kernel
enforces (``/proc/PID/status`` ``Cpus_allowed_list``/``Mems_allowed_list``).

Runs as root on a writable cpuset hierarchy: cgroup v2 at /sys/fs/cgroup
with the cpuset controller, else a v1 cpuset hierarchy at
/sys/fs/cgroup/cpuset. Elsewhere it skips with the precise reason; with
CI=true it fails only when the machine supports it and the test still could
not run. The outcome is printed in the terminal summary either way.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from podnuma.cgroups import (
    CgroupPlan,
    CgroupWriteError,
    apply_plan,
    attach,
    plan_cgroups,
    remove_plan,
)
from podnuma.cgroups.apply import is_cgroupfs
from podnuma.cgroups.plan import CgroupNode
from podnuma.inputs.scenario import load_scenario_text
from podnuma.machine.cpuset import CPUSet
from podnuma.service.machine import discover

CGROUP = Path("/sys/fs/cgroup")
UID = "5e0c0f6e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"


def _support() -> tuple[int | None, str]:
    """(cgroup version to test, or None; why)."""
    if os.geteuid() != 0:
        return None, f"not root (euid {os.geteuid()}): cgroup writes need root"
    online = Path("/sys/devices/system/cpu/online")
    try:
        cpus = CPUSet.parse(online.read_text().strip())
    except (OSError, ValueError) as err:
        return None, f"cannot read the online CPUs ({online}): {err}"
    if len(cpus) < 2:
        return None, f"only {len(cpus)} online CPU: pinning needs a CPU besides the reserved one"
    controllers = CGROUP / "cgroup.controllers"
    if controllers.is_file():
        offered = controllers.read_text().split()
        if "cpuset" not in offered:
            return None, f"cgroup v2 at {CGROUP}: no cpuset controller in cgroup.controllers ({' '.join(offered) or 'empty'})"
        if not os.access(CGROUP / "cgroup.subtree_control", os.W_OK):
            return None, f"cgroup v2 at {CGROUP}: cgroup.subtree_control is not writable"
        return 2, f"cgroup v2 at {CGROUP} with the cpuset controller"
    v1 = CGROUP / "cpuset"
    if v1.is_dir() and is_cgroupfs(v1) and (v1 / "cpuset.cpus").is_file():
        if not os.access(v1, os.W_OK):
            return None, f"cgroup v1 cpuset hierarchy at {v1} is not writable"
        return 1, f"cgroup v1 cpuset hierarchy at {v1}"
    unified = CGROUP / "unified" / "cgroup.controllers"
    extra = ""
    if unified.is_file():
        extra = f"; the cgroup2 at {unified.parent} offers: {unified.read_text().strip() or 'no controllers'}"
    return None, f"no cgroup v2 with cpuset at {CGROUP} and no v1 cpuset hierarchy{extra}"


VERSION, WHY = _support()


def _scenario(tmp_path: Path) -> str:
    node = discover(Path("/sys"), "this-node")
    numa = sorted(node["node"]["memory"])  # type: ignore[index]
    doc = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        **node,
        "kubeletConfig": {
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0",
            "memoryManagerPolicy": "Static",
            "systemReserved": {"memory": "1000Mi"},
            "reservedMemory": [{"numaNode": numa[0], "limits": {"memory": "1100Mi"}}],
        },
        "steps": [
            {
                "addPod": {
                    "metadata": {"name": "pinned", "namespace": "real", "uid": UID},
                    "spec": {
                        "containers": [
                            {
                                "name": "app",
                                "resources": {"limits": {"cpu": "1", "memory": "64Mi"}},
                            }
                        ]
                    },
                }
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


@pytest.fixture
def cgroup_plan(tmp_path: Path, record_property: Callable[[str, object], None]) -> Iterator[CgroupPlan]:
    if VERSION is None:
        record_property("real_cgroup", f"real cgroup test: NOT RUN: {WHY}")
        pytest.skip(f"real cgroup test: {WHY}")
    test_root = f"podnuma-test-{os.getpid()}"
    scenario = load_scenario_text(_scenario(tmp_path), name="real.yaml", base_dir=tmp_path)
    plan = plan_cgroups(scenario, driver="cgroupfs", version=VERSION, cgroup_root=(test_root,))
    try:
        yield plan
    finally:
        left = remove_plan(plan, CGROUP, extra=[f"{test_root}/bad"])
        assert left == [], f"cgroups left behind: {left}"


def _status(pid: int) -> dict[str, str]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def test_pins_a_real_process(
    cgroup_plan: CgroupPlan, record_property: Callable[[str, object], None]
) -> None:
    plan = cgroup_plan
    (container,) = [n for n in plan.nodes if n.kind == "container"]
    assert container.cpus is not None and container.mems is not None
    assert 0 not in container.cpus  # the reserved CPU stays out of an exclusive set
    report = apply_plan(plan, CGROUP)
    assert report.cgroupfs
    proc = subprocess.Popen(["sleep", "600"])
    try:
        attach(plan, CGROUP, container.path, proc.pid)
        status = _status(proc.pid)
        cgroup = Path(f"/proc/{proc.pid}/cgroup").read_text()
    finally:
        proc.kill()
        proc.wait()
    assert status["Cpus_allowed_list"] == str(container.cpus)
    assert status["Mems_allowed_list"] == ",".join(map(str, container.mems))
    assert container.path in cgroup
    record_property(
        "real_cgroup",
        f"real cgroup test: RAN on {WHY}: pid {proc.pid} in /{container.path}: "
        f"Cpus_allowed_list {status['Cpus_allowed_list']}, "
        f"Mems_allowed_list {status['Mems_allowed_list']}",
    )


def test_kernel_refusal_names_file_and_value(cgroup_plan: CgroupPlan) -> None:
    apply_plan(cgroup_plan, CGROUP)  # the test root exists, with a cpuset
    root_component = cgroup_plan.nodes[0].path
    bad = CgroupPlan(
        driver="cgroupfs",
        version=cgroup_plan.version,
        step=None,
        nodes=(
            cgroup_plan.nodes[0],
            CgroupNode(path=f"{root_component}/bad", kind="root", writer="kubelet", cpus=CPUSet([4095]), mems=(0,)),
        ),
    )
    with pytest.raises(CgroupWriteError) as info:
        apply_plan(bad, CGROUP)
    message = str(info.value)
    assert "cpuset.cpus" in message and "'4095'" in message
    assert ": ERANGE: " in message or ": EINVAL: " in message
    # the failed apply took back the cgroup it had created
    assert not (CGROUP / ("cpuset" if bad.version == 1 else "") / f"{root_component}/bad").exists()


def _cgroup2_without_cpuset() -> Path | None:
    for root in (CGROUP, CGROUP / "unified"):
        controllers = root / "cgroup.controllers"
        if controllers.is_file() and is_cgroupfs(root) and "cpuset" not in controllers.read_text().split():
            return root
    return None


def test_v2_without_cpuset_fails_cleanly(tmp_path: Path) -> None:
    """Where a cgroup2 lacks the cpuset controller, the kernel's ENOENT is
    reported with the file and value, and nothing stays behind."""
    root = _cgroup2_without_cpuset()
    if os.geteuid() != 0 or root is None:
        pytest.skip("needs root and a cgroup2 mount without the cpuset controller")
    scenario = load_scenario_text(_scenario(tmp_path), name="real.yaml", base_dir=tmp_path)
    test_root = f"podnuma-v2-{os.getpid()}"
    plan = plan_cgroups(scenario, driver="systemd", version=2, cgroup_root=(test_root,))
    with pytest.raises(CgroupWriteError) as info:
        apply_plan(plan, root)
    message = str(info.value)
    assert "cpuset.mems: writing '0': ENOENT: no such file: the controller is not enabled" in message
    assert message.endswith("cgroups this apply created were removed again)")
    assert not any(p.name.startswith(test_root) for p in root.iterdir())


def test_a_populated_stale_cgroup_is_reported_then_removed(cgroup_plan: CgroupPlan) -> None:
    """A pod no longer in the plan whose container still holds a process:
    the kernel refuses the rmdir (EBUSY), the apply reports it with the CPUs
    it keeps; once the process is gone the next apply removes it."""
    plan = cgroup_plan
    (container,) = [n for n in plan.nodes if n.kind == "container"]
    apply_plan(plan, CGROUP)
    without = dataclasses.replace(
        plan, nodes=tuple(n for n in plan.nodes if n.kind not in ("pod", "sandbox", "container"))
    )
    proc = subprocess.Popen(["sleep", "600"])
    try:
        attach(plan, CGROUP, container.path, proc.pid)
        dry = apply_plan(without, CGROUP, dry_run=True)
        report = apply_plan(without, CGROUP)
    finally:
        proc.kill()
        proc.wait()
    removals = ("stale", "rmdir")
    # the dry run foresees the kernel's EBUSY (it reads cgroup.procs)
    assert [str(op) for op in dry.operations if op.action in removals] == [
        str(op) for op in report.operations if op.action in removals
    ]
    stale = [op for op in report.operations if op.action == "stale"]
    held = [op for op in stale if op.path.endswith(container.path)]
    assert held and all("EBUSY: it still holds processes" in op.detail for op in held)
    assert any(f"it keeps cpuset.cpus {container.cpus}" in op.detail for op in held)
    report = apply_plan(without, CGROUP)
    assert not [op for op in report.operations if op.action == "stale"]
    pod_path = next(n.path for n in plan.nodes if n.kind == "pod")
    sub = "cpuset/" if plan.version == 1 else ""
    assert not (CGROUP / f"{sub}{pod_path}").exists()

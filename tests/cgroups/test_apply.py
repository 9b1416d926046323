"""``podnuma.cgroups.apply`` on plain directories: the kernel's order,
errno messages, dry runs, roll-back; and ``podnuma cgroups`` on the command
line."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cgroups import CgroupPlan, CgroupWriteError, apply_plan
from podnuma.cgroups.plan import CgroupFile, CgroupNode
from podnuma.cli import cli
from podnuma.errors import InputError
from podnuma.machine.cpuset import CPUSet

HERE = Path(__file__).parent
FULL = HERE / "full.yaml"


def _node(path: str, cpus: str | None, mems: tuple[int, ...] | None = None, *files: CgroupFile) -> CgroupNode:
    return CgroupNode(
        path=path, kind="root", writer="kubelet", files=files,
        cpus=None if cpus is None else CPUSet.parse(cpus), mems=mems,
    )  # fmt: skip


def _plan(*nodes: CgroupNode, version: int = 2) -> CgroupPlan:
    return CgroupPlan(driver="cgroupfs", version=version, step=None, nodes=nodes)


def _seed(root: Path, path: str, **files: str) -> None:
    d = root / path
    d.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        (d / name.replace("_", ".")).write_text(value + "\n")


def test_cpus_widened_top_down_then_narrowed_bottom_up(tmp_path: Path) -> None:
    _seed(tmp_path, "a", cpuset_cpus="0-1")
    _seed(tmp_path, "a/b", cpuset_cpus="0-1")
    plan = _plan(_node("a", "2-3"), _node("a/b", "3"))
    report = apply_plan(plan, tmp_path)
    writes = [(op.path, op.value) for op in report.operations if op.action == "write"]
    assert writes == [
        ("a/cpuset.cpus", "0-3"),
        ("a/b/cpuset.cpus", "0-1,3"),
        ("a/b/cpuset.cpus", "3"),
        ("a/cpuset.cpus", "2-3"),
    ]
    assert (tmp_path / "a/b/cpuset.cpus").read_text().strip() == "3"


def test_mems_before_cpus_and_before_other_files(tmp_path: Path) -> None:
    plan = _plan(_node("p", "1", (0,), CgroupFile("cpu.weight", "39")), version=1)
    report = apply_plan(plan, tmp_path)
    assert [str(op) for op in report.operations] == [
        "mkdir cpu",
        "mkdir cpu/p",
        "mkdir cpuset",
        "mkdir cpuset/p",
        "write cpuset/p/cpuset.mems '0'",
        "write cpuset/p/cpuset.cpus '1'",
        "write cpu/p/cpu.weight '39'",
    ]


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    report = apply_plan(_plan(_node("a", "1", (0,)), _node("a/b", "1")), tmp_path, dry_run=True)
    assert [op.action for op in report.operations] == ["mkdir", "mkdir", "write", "write", "write"]
    assert list(tmp_path.iterdir()) == []


def refuse_write(monkeypatch: pytest.MonkeyPatch, value: bytes, code: int) -> None:
    """Every write of ``value`` (the start of the data) fails with errno
    ``code``, as the kernel would refuse it; other writes go through."""
    real_write = os.write

    def refuse(fd: int, data: bytes) -> int:
        if data.startswith(value):
            raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", refuse)


@pytest.mark.parametrize(
    ("code", "name", "why"),
    [
        # a plain directory: an ordinary file system's reasons (the cgroup
        # code's are for a cgroup file system: test_kernel_errors_on_a_cgroup_file_system)
        (errno.EINVAL, "EINVAL", os.strerror(errno.EINVAL)),
        (errno.ERANGE, "ERANGE", os.strerror(errno.ERANGE)),
        (errno.ENOSPC, "ENOSPC", "no space left on the device"),
        (errno.EBUSY, "EBUSY", os.strerror(errno.EBUSY)),
        (errno.EACCES, "EACCES", "permission denied"),
    ],
)
def test_kernel_errors_name_file_and_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, name: str, why: str
) -> None:
    refuse_write(monkeypatch, b"5-6", code)
    with pytest.raises(CgroupWriteError) as info:
        apply_plan(_plan(_node("a", "0-7"), _node("a/b", "5-6")), tmp_path)
    err = info.value
    assert err.file == str(tmp_path / "a/b/cpuset.cpus")
    assert err.message == f"writing '5-6': {name}: {why} (the 2 cgroups this apply created were removed again)"
    assert list(tmp_path.iterdir()) == []  # rolled back, nothing half-written


@pytest.mark.parametrize(
    ("code", "name", "why"),
    [
        (errno.EINVAL, "EINVAL", "the kernel refused the value"),
        (errno.ERANGE, "ERANGE", "the value is out of range"),
        (errno.ENOSPC, "ENOSPC", "no CPUs or memory nodes left"),
        (errno.EBUSY, "EBUSY", "busy: a child cgroup still uses"),
        (errno.EACCES, "EACCES", "permission denied (not root, or on v1 not a subset"),
        (errno.EPERM, "EPERM", "operation not permitted (not root, or outside a delegated"),
    ],
)
def test_kernel_errors_on_a_cgroup_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, name: str, why: str
) -> None:
    """The same refusals where the root is a cgroup file system (taken to be
    one here; its interface files exist): the cgroup code's reasons."""
    monkeypatch.setattr("podnuma.cgroups.apply.is_cgroupfs", lambda path: True)
    _seed(tmp_path, "a", cpuset_cpus="0-7")
    _seed(tmp_path, "a/b", cpuset_cpus="")
    refuse_write(monkeypatch, b"5-6", code)
    with pytest.raises(CgroupWriteError) as info:
        apply_plan(_plan(_node("a", "0-7"), _node("a/b", "5-6")), tmp_path)
    assert info.value.file == str(tmp_path / "a/b/cpuset.cpus")
    assert info.value.message.startswith(f"writing '5-6': {name}: {why}")


def test_symlinked_cgroup_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "a").symlink_to(outside)
    with pytest.raises(Exception, match="symlink"):
        apply_plan(_plan(_node("a", "1")), root)
    assert list(outside.iterdir()) == []


# ---------------------------------------------------------------------- CLI


def test_cli_plan_json(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli, ["cgroups", "plan", str(FULL), "--driver", "systemd", "--cgroup-version", "2", "-o", "json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["driver"] == "systemd" and doc["cgroupVersion"] == 2 and doc["step"] == 2
    kinds = [c["kind"] for c in doc["cgroups"]]
    assert kinds.count("container") == 3 and kinds.count("pod") == 3 and kinds[0] == "node"


def test_cli_plan_table_is_a_tree() -> None:
    res = CliRunner().invoke(
        cli, ["cgroups", "plan", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "1", "--step", "0"]
    )
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("cgroups after step 0  (driver cgroupfs, cgroup v1")
    assert lines[1] == "/kubepods   [node allocatable; kubelet]"
    assert "    pod11111111-aaaa-bbbb-cccc-000000000001   [pod t/g; kubelet]" in lines
    assert "            cpuset.cpus = 1,5" in lines


def test_cli_apply_dry_run_and_real(tmp_path: Path) -> None:
    args = ["cgroups", "apply", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2", "--root", str(tmp_path)]
    res = CliRunner().invoke(cli, [*args, "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "write kubepods/cpu.weight '274'" in res.output
    assert list(tmp_path.iterdir()) == []
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "kubepods/cpu.weight").read_text().strip() == "274"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--step", "9"], "error: {scenario}: --step 9: no such step (the scenario has steps 0-2)"),
        (["--cgroup-root", "../up"], "error: --cgroup-root: '../up' names a cgroup above the cgroup root (the "
         "kubelet's cgroupfs name '/' + path.Join(...) is '/../up/kubepods'); podnuma writes only under its root"),
    ],
)
def test_cli_bad_input(tmp_path: Path, extra: list[str], message: str) -> None:
    res = CliRunner().invoke(
        cli, ["cgroups", "plan", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2", *extra]
    )
    assert res.exit_code == 2
    assert res.output.strip() == message.format(scenario=FULL)


def test_cli_apply_missing_root(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    res = CliRunner().invoke(
        cli, ["cgroups", "apply", str(FULL), "--driver", "systemd", "--cgroup-version", "2", "--root", str(missing)]
    )
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {missing}: --root: no such directory"


def test_period_refused_is_written_again_after_the_quota(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    refused: list[bytes] = []

    def refuse_first_period(fd: int, data: bytes) -> int:
        if data == b"100000" and not refused:
            refused.append(data)
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", refuse_first_period)
    plan = _plan(
        _node("p", None, None, CgroupFile("cpu.shares", "1024"), CgroupFile("cpu.cfs_period_us", "100000"),
              CgroupFile("cpu.cfs_quota_us", "50000")),
        version=1,
    )  # fmt: skip
    report = apply_plan(plan, tmp_path)
    writes = [str(op) for op in report.operations if op.action == "write"]
    assert writes == [
        "write cpu/p/cpu.shares '1024'",
        "write cpu/p/cpu.cfs_quota_us '50000'",
        "write cpu/p/cpu.cfs_period_us '100000'",
    ]
    assert refused == [b"100000"]
    assert (tmp_path / "cpu/p/cpu.cfs_period_us").read_text() == "100000"


# ------------------------------------------------------------- bad names


def _scenario_with_uid(tmp_path: Path, uid: str) -> Path:
    text = FULL.read_text().replace(
        "uid: 11111111-aaaa-bbbb-cccc-000000000002", "uid: " + json.dumps(uid)
    )
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("uid", "driver", "why"),
    [
        ("x" * 300, "cgroupfs", "is 303 bytes long; the kernel's limit for a name is 255 bytes"),
        ("x" * 250, "systemd", "is 278 bytes long; the kernel's limit for a name is 255 bytes"),
        ("a/../../b", "cgroupfs", "contains '/' or '_'"),
        ("a\u0000b", "cgroupfs", "is not a usable cgroup name"),
        ("a\nb", "systemd", "is not a usable cgroup name"),
        # (refused where the scenario is read: no UTF-8 for it)
        ("a\udfffb", "systemd", "not Unicode text: a lone surrogate (\\udfff, written as an escape)"),
    ],
)
def test_bad_pod_uid_exits_2_and_leaves_nothing(tmp_path: Path, uid: str, driver: str, why: str) -> None:
    scenario = _scenario_with_uid(tmp_path, uid)
    root = tmp_path / "root"
    root.mkdir()
    res = CliRunner().invoke(
        cli, ["cgroups", "apply", str(scenario), "--driver", driver, "--cgroup-version", "2", "--root", str(root)]
    )
    assert res.exit_code == 2, res.output
    lines = res.output.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {scenario}: steps[1].addPod.metadata.uid: ")
    assert why in lines[0]
    assert list(root.iterdir()) == []


def test_plan_built_by_hand_is_validated_before_the_first_write(tmp_path: Path) -> None:
    plan = _plan(_node("a", "1"), _node("a/" + "b" * 256, "1"))
    with pytest.raises(InputError, match="is 256 bytes long") as info:
        apply_plan(plan, tmp_path)
    assert info.value.path == "cgroups[1]"
    assert list(tmp_path.iterdir()) == []


def test_a_failure_midway_removes_what_the_apply_created(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").write_text("a file where a cgroup should go")
    with pytest.raises(CgroupWriteError, match="something that is not a directory is in the way") as info:
        apply_plan(_plan(_node("x", "1"), _node("x/y", "1"), _node("a/b", "1")), tmp_path)
    assert "were removed again" in info.value.message
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b"]


def test_a_fifo_or_hard_link_in_the_tree_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("keep me")
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    os.link(outside, root / "a" / "cpuset.cpus")
    with pytest.raises(CgroupWriteError, match="other hard links"):
        apply_plan(_plan(_node("a", "1")), root)
    assert outside.read_text() == "keep me"
    os.unlink(root / "a" / "cpuset.cpus")
    os.mkfifo(root / "a" / "cpuset.cpus")
    with pytest.raises(CgroupWriteError, match="ENXIO|EINVAL"):  # no reader: no hang either
        apply_plan(_plan(_node("a", "1")), root)


# -------------------------------------------------------- a changed plan


def _apply_cli(root: Path, *extra: str, scenario: Path = FULL) -> list[str]:
    res = CliRunner().invoke(
        cli,
        ["cgroups", "apply", str(scenario), "--driver", "cgroupfs", "--cgroup-version", "2",
         "--root", str(root), *extra],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    return res.output.splitlines()


def _pod_dirs(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("pod*") if p.is_dir())


def test_cgroups_of_pods_no_longer_in_the_plan_are_removed(tmp_path: Path) -> None:
    _apply_cli(tmp_path)
    before = _pod_dirs(tmp_path)
    assert len(before) == 3
    out = _apply_cli(tmp_path, "--step", "0")  # only the first pod runs after step 0
    after = _pod_dirs(tmp_path)
    assert after == ["kubepods/pod11111111-aaaa-bbbb-cccc-000000000001"]
    removed = [line for line in out if line.startswith("rmdir ")]
    # the two pods' cgroups and their sandbox and container cgroups, leaves first
    assert len(removed) == 6
    assert removed[-1] == "rmdir kubepods/besteffort/pod11111111-aaaa-bbbb-cccc-000000000003 (not in the plan)"
    assert "removed 6 cgroups of pods no longer in the plan" in out[-1]
    # nothing left under the tiers holds a cpuset the plan does not know
    cpus = {p.parent.name for p in tmp_path.rglob("cpuset.cpus")}
    assert all(name == "kubepods" or "000000000001" in name or len(name) == 64 for name in cpus)


def test_a_stale_container_of_a_planned_pod_is_removed(tmp_path: Path) -> None:
    _apply_cli(tmp_path)
    pod = tmp_path / "kubepods/pod11111111-aaaa-bbbb-cccc-000000000001"
    stale = pod / ("f" * 64)
    stale.mkdir()
    (stale / "cpuset.cpus").write_text("1\n")
    out = _apply_cli(tmp_path)
    assert f"rmdir kubepods/pod11111111-aaaa-bbbb-cccc-000000000001/{'f' * 64} (not in the plan)" in out
    assert not stale.exists()


def test_what_cannot_be_removed_is_reported_with_its_cpus(tmp_path: Path) -> None:
    _apply_cli(tmp_path)
    pod = tmp_path / "kubepods/burstable/pod11111111-aaaa-bbbb-cccc-000000000002"
    (pod / "cpuset.cpus").write_text("2-3\n")
    os.mkfifo(pod / "not-ours")  # not a file podnuma writes: the directory cannot be emptied
    res = CliRunner().invoke(
        cli,
        ["cgroups", "apply", str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2",
         "--root", str(tmp_path), "--step", "0"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (
        "stale kubepods/burstable/pod11111111-aaaa-bbbb-cccc-000000000002 (not in the plan, cannot remove: "
        "ENOTEMPTY: it holds files or directories podnuma did not write (not-ours); it keeps cpuset.cpus 2-3)"
    ) in res.output.splitlines()
    assert "warning: 1 cgroups of pods no longer in the plan are left" in res.output


def test_keep_stale_only_reports_and_dry_run_changes_nothing(tmp_path: Path) -> None:
    _apply_cli(tmp_path)
    before = _pod_dirs(tmp_path)
    out = _apply_cli(tmp_path, "--step", "0", "--keep-stale")
    assert _pod_dirs(tmp_path) == before
    assert sum(line.startswith("stale ") for line in out) == 6
    out = _apply_cli(tmp_path, "--step", "0", "--dry-run")
    assert _pod_dirs(tmp_path) == before
    assert sum(line.startswith("rmdir ") for line in out) == 6


def test_pods_known_only_from_a_checkpoint_keep_their_cgroups(tmp_path: Path) -> None:
    plan = _plan(_node("kubepods", None))
    plan = CgroupPlan(driver="cgroupfs", version=2, step=None, nodes=(
        CgroupNode(path="kubepods", kind="node", writer="kubelet"),), unplanned=("uid-old",))  # fmt: skip
    (tmp_path / "kubepods/poduid-old").mkdir(parents=True)
    (tmp_path / "kubepods/poduid-gone").mkdir(parents=True)
    (tmp_path / "kubepods/burstable").mkdir(parents=True)  # a tier, not a pod
    report = apply_plan(plan, tmp_path)
    assert [str(op) for op in report.operations if op.action == "rmdir"] == [
        "rmdir kubepods/poduid-gone (not in the plan)"
    ]
    assert sorted(p.name for p in (tmp_path / "kubepods").iterdir()) == ["burstable", "poduid-old"]

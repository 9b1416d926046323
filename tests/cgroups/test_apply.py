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


@pytest.mark.parametrize(
    ("code", "name", "why"),
    [
        (errno.EINVAL, "EINVAL", "the kernel refused the value"),
        (errno.ERANGE, "ERANGE", "the value is out of range"),
        (errno.ENOSPC, "ENOSPC", "no CPUs or memory nodes left"),
        (errno.EBUSY, "EBUSY", "busy: a child cgroup still uses"),
        (errno.EACCES, "EACCES", "permission denied"),
    ],
)
def test_kernel_errors_name_file_and_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, name: str, why: str
) -> None:
    real_write = os.write

    def refuse(fd: int, data: bytes) -> int:
        if data.startswith(b"5-6"):
            raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", refuse)
    with pytest.raises(CgroupWriteError) as info:
        apply_plan(_plan(_node("a", "0-7"), _node("a/b", "5-6")), tmp_path)
    err = info.value
    assert err.file == str(tmp_path / "a/b/cpuset.cpus")
    assert err.message.startswith(f"writing '5-6': {name}: {why}")
    assert err.message.endswith("(the 2 cgroups this apply created were removed again)")
    assert list(tmp_path.iterdir()) == []  # rolled back, nothing half-written


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
        (["--step", "9"], "error: {scenario}: --step 9: the scenario has steps 0-2"),
        (["--cgroup-root", "../up"], "error: cgroupRoot: cgroup root component '..' is not a usable cgroup name"),
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
    assert res.output.strip() == f"error: {missing}: --root: not a directory"


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

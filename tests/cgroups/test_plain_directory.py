"""``podnuma cgroups apply`` on a plain directory (not a cgroup file system):
the cgroups of pods no longer in the plan lose only the files podnuma
writes, and a directory holding anything else stays, reported as stale
(``--dry-run`` too); errors are explained as an ordinary file system's
(ENOSPC: a full disk, not an empty cpuset); ``--cgroup-root`` errors name
the option."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import podnuma
from podnuma.cgroups import CgroupPlan, CgroupWriteError, apply_plan, remove_plan
from podnuma.cgroups.apply import explain_errno
from podnuma.cgroups.plan import CgroupFile, CgroupNode
from podnuma.cli import cli
from podnuma.machine.cpuset import CPUSet

from .test_apply import refuse_write

FULL = Path(__file__).parent / "full.yaml"
SRC = str(Path(podnuma.__file__).parents[1])  # the podnuma this test runs, for the subprocess
POD = "kubepods/pod11111111-aaaa-bbbb-cccc-000000000001"  # planned after every step of full.yaml


def _apply(root: Path, *extra: str, driver: str = "cgroupfs", version: str = "2") -> Result:
    return CliRunner().invoke(
        cli,
        ["cgroups", "apply", str(FULL), "--driver", driver, "--cgroup-version", version,
         "--root", str(root), *extra],
    )  # fmt: skip


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()
    }


# ------------------------------------------------------ 1. what is deleted


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run"])
def test_a_stale_pod_directory_holding_a_file_podnuma_did_not_write_is_kept(
    tmp_path: Path, dry_run: bool
) -> None:
    assert _apply(tmp_path).exit_code == 0
    stale = tmp_path / "kubepods/podcast"
    stale.mkdir()
    (stale / "notes.txt").write_text("precious\n")
    (stale / "cpuset.cpus").write_text("3\n")  # a file podnuma writes: it stays with its directory
    before = _files(tmp_path)
    res = _apply(tmp_path, *(["--dry-run"] if dry_run else []))
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert (
        "stale kubepods/podcast (not in the plan, cannot remove: ENOTEMPTY: it holds files or "
        "directories podnuma did not write (notes.txt); it keeps cpuset.cpus 3)"
    ) in lines
    assert not any(line.startswith("rmdir ") for line in lines)
    assert "warning: 1 cgroups of pods no longer in the plan are left (see the 'stale' lines)" in lines
    assert (stale / "notes.txt").read_text() == "precious\n"
    assert (stale / "cpuset.cpus").read_text() == "3\n"
    if dry_run:
        assert _files(tmp_path) == before


def test_once_only_podnumas_files_are_left_the_directory_goes(tmp_path: Path) -> None:
    assert _apply(tmp_path).exit_code == 0
    stale = tmp_path / "kubepods/podcast"
    stale.mkdir()
    (stale / "notes.txt").write_text("precious\n")
    for name in ("cpuset.cpus", "cpu.weight", "hugetlb.2MB.max", "hugetlb.1GB.rsvd.max", "memory.oom.group"):
        (stale / name).write_text("1\n")
    assert "stale kubepods/podcast" in _apply(tmp_path).output
    (stale / "notes.txt").unlink()
    res = _apply(tmp_path)
    assert res.exit_code == 0, res.output
    assert "rmdir kubepods/podcast (not in the plan)" in res.output.splitlines()
    assert not stale.exists()


def test_a_file_deep_below_keeps_every_directory_above_it(tmp_path: Path) -> None:
    assert _apply(tmp_path).exit_code == 0
    stale = tmp_path / "kubepods/burstable/podcast"
    deep = stale / ("c" * 64) / "data"
    deep.mkdir(parents=True)
    (deep / "db.sqlite").write_text("rows\n")
    (stale / ("c" * 64) / "cpu.max").write_text("max 100000\n")
    (stale / "cpu.weight").write_text("4\n")
    gone = stale / ("d" * 64)  # a container cgroup with podnuma's files only
    gone.mkdir()
    (gone / "cpuset.cpus").write_text("2\n")
    res = _apply(tmp_path)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    data = f"kubepods/burstable/podcast/{'c' * 64}/data"
    assert f"stale {data} (not in the plan, cannot remove: ENOTEMPTY: it holds files or directories podnuma " \
        "did not write (db.sqlite))" in lines  # fmt: skip
    assert f"stale kubepods/burstable/podcast/{'c' * 64} (a cgroup below it stays)" in lines
    assert "stale kubepods/burstable/podcast (a cgroup below it stays)" in lines
    assert f"rmdir kubepods/burstable/podcast/{'d' * 64} (not in the plan)" in lines
    assert (deep / "db.sqlite").read_text() == "rows\n"
    assert (stale / ("c" * 64) / "cpu.max").read_text() == "max 100000\n"
    assert (stale / "cpu.weight").read_text() == "4\n"
    assert not gone.exists()


def test_a_link_or_fifo_named_like_podnumas_files_is_not_its_own(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("keep me\n")
    root = tmp_path / "root"
    root.mkdir()
    assert _apply(root).exit_code == 0
    for what in ("hard link", "symlink", "fifo"):
        stale = root / "kubepods/podcast"
        stale.mkdir()
        target = stale / "cpu.weight"
        if what == "hard link":
            os.link(outside, target)
        elif what == "symlink":
            target.symlink_to(outside)
        else:
            os.mkfifo(target)
        res = _apply(root)
        assert res.exit_code == 0, res.output
        assert "stale kubepods/podcast (not in the plan, cannot remove: ENOTEMPTY: it holds files or " \
            "directories podnuma did not write (cpu.weight))" in res.output.splitlines(), what  # fmt: skip
        assert os.path.lexists(target), what
        os.unlink(target)
        stale.rmdir()
    assert outside.read_text() == "keep me\n"


@pytest.mark.parametrize(
    ("driver", "version", "pod", "ours", "theirs"),
    [
        ("cgroupfs", 2, "kubepods/podgone", ["cpu.max", "memory.high", "hugetlb.64KB.max"], "cgroup.controllers"),
        ("systemd", 2, "kubepods.slice/kubepods-podgone.slice", ["cpu.weight", "pids.max"], "io.max"),
        ("cgroupfs", 1, "cpuset/kubepods/podgone", ["cpuset.mems", "cgroup.procs"], "tasks"),
        ("cgroupfs", 1, "memory/kubepods/podgone",
         ["memory.limit_in_bytes", "hugetlb.2MB.rsvd.limit_in_bytes"], "memory.max"),
    ],
)  # fmt: skip
def test_only_the_names_the_plan_writes_for_that_version_are_podnumas(
    tmp_path: Path, driver: str, version: int, pod: str, ours: list[str], theirs: str
) -> None:
    kubepods = "kubepods.slice" if driver == "systemd" else "kubepods"
    plan = CgroupPlan(driver=driver, version=version, step=None,  # type: ignore[arg-type]
                      nodes=(CgroupNode(path=kubepods, kind="node", writer="kubelet"),))  # fmt: skip
    d = tmp_path / pod
    d.mkdir(parents=True)
    for name in ours:
        # an empty cgroup.procs: one that lists a process keeps the cgroup (EBUSY)
        (d / name).write_text("" if name == "cgroup.procs" else "1\n")
    (d / theirs).write_text("not podnuma's\n")
    report = apply_plan(plan, tmp_path)
    assert [op.action for op in report.operations if op.path == pod] == ["stale"]
    assert sorted(p.name for p in d.iterdir()) == sorted([*ours, theirs])
    (d / theirs).unlink()
    report = apply_plan(plan, tmp_path)
    assert [op.action for op in report.operations if op.path == pod] == ["rmdir"]
    assert not d.exists()


def test_remove_plan_on_a_plain_directory_keeps_what_podnuma_did_not_write(tmp_path: Path) -> None:
    plan = CgroupPlan(driver="cgroupfs", version=2, step=None, nodes=(
        CgroupNode(path="kubepods", kind="node", writer="kubelet"),
        CgroupNode(path="kubepods/poda", kind="pod", writer="kubelet", files=(CgroupFile("cpu.weight", "4"),)),
    ))  # fmt: skip
    apply_plan(plan, tmp_path)
    (tmp_path / "kubepods/poda/notes.txt").write_text("precious\n")
    left = remove_plan(plan, tmp_path)
    assert left == ["kubepods/poda", "kubepods"]
    assert sorted(p.name for p in (tmp_path / "kubepods/poda").iterdir()) == ["cpu.weight", "notes.txt"]
    (tmp_path / "kubepods/poda/notes.txt").unlink()
    assert remove_plan(plan, tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_a_stale_container_of_a_planned_pod_with_podnumas_files_only_still_goes(tmp_path: Path) -> None:
    assert _apply(tmp_path).exit_code == 0
    stale = tmp_path / POD / ("f" * 64)
    stale.mkdir()
    (stale / "cpuset.cpus").write_text("1\n")
    (stale / "memory.swap.max").write_text("0\n")
    res = _apply(tmp_path)
    assert f"rmdir {POD}/{'f' * 64} (not in the plan)" in res.output.splitlines()
    assert not stale.exists()


# ------------------------------------------------ 2. errors, explained


@pytest.mark.parametrize(
    ("code", "cgroupfs", "why"),
    [
        (errno.ENOSPC, False, "no space left on the device"),
        (errno.ENOSPC, True, "no CPUs or memory nodes left (an empty cpuset cannot hold tasks, and a "
                             "populated one cannot be emptied)"),
        (errno.EPERM, False, "operation not permitted"),
        (errno.EPERM, True, "operation not permitted (not root, or outside a delegated cgroup namespace)"),
        (errno.EACCES, False, "permission denied"),
        (errno.EDQUOT, False, "disk quota exceeded"),
        (errno.EROFS, False, "read-only file system"),
        (errno.ENOENT, False, "no such file or directory"),
        (errno.ENOENT, True, "no such file: the controller is not enabled in this cgroup"),
        (errno.EINVAL, False, os.strerror(errno.EINVAL)),
        (errno.EBUSY, False, os.strerror(errno.EBUSY)),
        (errno.ENXIO, False, "not a regular file: a FIFO, socket or device file is in its place"),
        (errno.ELOOP, False, "a symlink is in the way (refusing to follow it out of the root)"),
        (errno.ELOOP, True, "a symlink is in the way (refusing to follow it out of the root)"),
        (errno.EMLINK, False, os.strerror(errno.EMLINK)),  # the kernel's: too many links (mkdir)
    ],
)  # fmt: skip
def test_an_errno_is_explained_for_the_file_system_it_came_from(code: int, cgroupfs: bool, why: str) -> None:
    assert explain_errno(OSError(code, os.strerror(code)), cgroupfs=cgroupfs) == why


def test_what_is_in_a_files_place_is_named() -> None:
    fifo = "a FIFO (named pipe)"
    assert explain_errno(OSError(errno.ENXIO, os.strerror(errno.ENXIO)), cgroupfs=False, found=fifo) == (
        "not a regular file: a FIFO (named pipe) is in its place"
    )
    own = OSError(errno.EINVAL, "not a regular file", "a/cpu.weight")  # podnuma.cgroups.beneath's
    assert explain_errno(own, cgroupfs=True) == "not a regular file"
    assert explain_errno(own, cgroupfs=True, found="a socket") == "not a regular file: a socket is in its place"
    links = OSError(errno.EMLINK, "refusing a file with other hard links", "a/cpu.weight")
    assert explain_errno(links, cgroupfs=False) == "refusing a file with other hard links"


def _one_node_plan() -> CgroupPlan:
    return CgroupPlan(driver="cgroupfs", version=2, step=None, nodes=(
        CgroupNode(path="a", kind="root", writer="kubelet", cpus=CPUSet.parse("0-7")),
        CgroupNode(path="a/b", kind="root", writer="kubelet", cpus=CPUSet.parse("5-6")),
    ))  # fmt: skip


@pytest.mark.parametrize(
    ("code", "why"),
    [(errno.ENOSPC, "no space left on the device"), (errno.EPERM, "operation not permitted")],
)
def test_a_write_failing_on_a_plain_directory_is_not_a_cgroup_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, why: str
) -> None:
    refuse_write(monkeypatch, b"5-6", code)
    with pytest.raises(CgroupWriteError) as info:
        apply_plan(_one_node_plan(), tmp_path)
    name = errno.errorcode[code]
    assert info.value.message == f"writing '5-6': {name}: {why} (the 2 cgroups this apply created were removed again)"
    assert list(tmp_path.iterdir()) == []


def test_a_fifo_where_a_file_goes_is_named(tmp_path: Path) -> None:
    (tmp_path / "kubepods").mkdir()
    os.mkfifo(tmp_path / "kubepods/cpu.weight")
    res = _apply(tmp_path)
    assert res.exit_code == 2
    assert res.output.splitlines() == [
        f"error: {tmp_path / 'kubepods/cpu.weight'}: writing '274': ENXIO: not a regular file: a FIFO (named "
        "pipe) is in its place (the 11 cgroups this apply created were removed again)"
    ]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["cpu.weight", "kubepods"]


def _tmpfs_support() -> str | None:
    """Why a tiny tmpfs cannot be mounted here (in a mount namespace of its
    own, so nothing is left mounted), or ``None``."""
    if os.geteuid() != 0:
        return "not root: mounting a tmpfs needs root"
    if shutil.which("unshare") is None:
        return "no unshare(1)"
    probe = subprocess.run(
        ["unshare", "--mount", "sh", "-c", "mount -t tmpfs -o size=12k tmpfs /mnt"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        return f"cannot mount a tmpfs in a mount namespace: {probe.stderr.strip()}"
    return None


def test_a_full_disk_says_so(tmp_path: Path) -> None:
    """A real full file system: a 12 KiB tmpfs, mounted in a private mount
    namespace (gone when the command ends)."""
    why = _tmpfs_support()
    if why is not None:
        pytest.skip(why)
    small = tmp_path / "small"
    small.mkdir()
    script = (
        'mount -t tmpfs -o size=12k tmpfs "$1" && mkdir "$1/r" && shift && "$@"; code=$?; '
        'find "$0/r" -mindepth 1 >&2; exit $code'
    )
    proc = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script, str(small), str(small), sys.executable, "-m", "podnuma.cli",
         "cgroups", "apply", str(FULL), "--driver", "systemd", "--cgroup-version", "2", "--root", str(small / "r")],
        capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr  # one line, and find(1) listed nothing: rolled back
    assert ": ENOSPC: no space left on the device (the " in lines[0]
    assert lines[0].startswith(f"error: {small / 'r'}/") and "no CPUs or memory nodes" not in lines[0]
    assert list(small.iterdir()) == []  # the mount is gone with its namespace


# ---------------------------------------------------- 3. --cgroup-root


@pytest.mark.parametrize("command", ["plan", "apply"])
@pytest.mark.parametrize("value", ["../esc", "a/../../b", "/.."])
def test_a_bad_cgroup_root_names_the_option(tmp_path: Path, command: str, value: str) -> None:
    # cgroupfs: path.Join keeps a leading ".." (the kubelet's /../esc):
    # refused, nothing written
    root = tmp_path / "rr"
    root.mkdir()
    extra = ["--root", str(root)] if command == "apply" else []
    res = CliRunner().invoke(
        cli,
        ["cgroups", command, str(FULL), "--driver", "cgroupfs", "--cgroup-version", "2", *extra,
         "--cgroup-root", value],
    )  # fmt: skip
    assert res.exit_code == 2
    lines = res.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --cgroup-root: "), lines
    assert "names a cgroup above the cgroup root" in lines[0]
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("driver", ["cgroupfs", "systemd"])
@pytest.mark.parametrize("value", ["../esc", "a/../b", "a/./b", "./..", "a/../.."])
def test_dot_components_stay_under_the_root(tmp_path: Path, driver: str, value: str) -> None:
    # as the kubelet reads them: cleaned by path.Join (cgroupfs), parts of
    # slice names (systemd, every directory ending in ".slice")
    if driver == "cgroupfs" and value in ("../esc", "./..", "a/../.."):
        return  # (above the root: refused, the test before)
    root = tmp_path / "rr"
    root.mkdir()
    res = CliRunner().invoke(
        cli,
        ["cgroups", "apply", str(FULL), "--driver", driver, "--cgroup-version", "2", "--root", str(root),
         "--cgroup-root", value],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    for path in root.rglob("*"):
        assert path.resolve().is_relative_to(root.resolve())
        if driver == "systemd" and path.is_dir():
            assert path.name.endswith((".slice", ".scope")), path
    assert not (tmp_path / "esc").exists() and not (tmp_path / "b").exists()



def test_cgroup_v1_pids_hierarchy_is_pruned_too(tmp_path: Path) -> None:
    """On cgroup v1 a pod's pids.max (podPidsLimit) lives in the pids
    hierarchy: a pod no longer in the plan leaves it as it leaves the
    others (it stayed behind there)."""
    import yaml

    root = tmp_path / "tree"
    for controller in ("cpuset", "cpu", "memory", "hugetlb", "pids"):
        (root / controller).mkdir(parents=True)
    example = Path(__file__).resolve().parents[2] / "examples" / "real-node" / "this-node.yaml"
    doc = yaml.safe_load(example.read_text())
    uid = doc["steps"][0]["addPod"]["metadata"]["uid"]
    args = ["--driver", "cgroupfs", "--cgroup-version", "1", "--root", str(root), "--set", "podPidsLimit=100"]
    res = CliRunner().invoke(cli, ["cgroups", "apply", str(example), *args])
    assert res.exit_code == 0, res.output
    assert (root / "pids" / "kubepods" / f"pod{uid}" / "pids.max").read_text() == "100"
    doc["steps"].append({"removePod": uid})
    (tmp_path / "removed.yaml").write_text(yaml.safe_dump(doc))
    res = CliRunner().invoke(cli, ["cgroups", "apply", str(tmp_path / "removed.yaml"), *args])
    assert res.exit_code == 0, res.output
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob(f"pod{uid}")) == []

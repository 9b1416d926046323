"""What ``podnuma cgroups apply`` foresees and refuses:

1. a dry run fails where the real apply would (something in the way of a
   cgroup or of a file, a symlink, a file with other hard links), with the
   same error and exit status, writing nothing;
2. a cgroup of a pod no longer in the plan whose ``cgroup.procs`` (v1: or
   ``tasks``) lists a process is kept and reported ``stale`` as the
   kernel's ``rmdir`` answers (``EBUSY``), on a plain directory and with
   ``--dry-run`` too;
3. ``--cgroup-root`` read as the kubelet reads it (``ParseCgroupfsToCgroupName``):
   empty components dropped under the cgroupfs driver (``path.Join``),
   refused under the systemd driver (``ToSystemd`` panics at start)."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import podnuma
from podnuma.cgroups import CgroupPlan, CgroupWriteError, apply_plan, remove_plan
from podnuma.cgroups.beneath import Beneath
from podnuma.cgroups.plan import CgroupFile, CgroupNode, parse_cgroup_root
from podnuma.cli import cli
from podnuma.errors import InputError
from podnuma.machine.cpuset import CPUSet

FULL = Path(__file__).parent / "full.yaml"
SRC = str(Path(podnuma.__file__).parents[1])  # the podnuma this test runs, for the subprocess
ROLLED_BACK = re.compile(r" \(the \d+ cgroups this apply created were removed again\)$")


def _cli(root: Path, *extra: str, driver: str = "systemd", version: str = "2") -> Result:
    return CliRunner().invoke(
        cli,
        ["cgroups", "apply", str(FULL), "--driver", driver, "--cgroup-version", version,
         "--root", str(root), *extra],
    )  # fmt: skip


def _tree(*dirs: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under ``dirs``: mode, links and (regular files) content."""
    out: dict[str, tuple[int, int, str]] = {}
    for top in dirs:
        for path in [top, *sorted(top.rglob("*"))]:
            st = path.lstat()
            text = path.read_text() if path.is_file() and not path.is_symlink() else ""
            out[str(path)] = (st.st_mode, st.st_nlink, text)
    return out


def _errors(res: Result) -> list[str]:
    return [line for line in res.output.splitlines() if line.startswith("error: ")]


# ------------------------------------------- 1. a dry run fails like the apply


def _file_in_the_way(root: Path, outside: Path) -> None:
    (root / "kubepods.slice").write_text("")


def _symlink_out_of_the_root(root: Path, outside: Path) -> None:
    (root / "kubepods.slice").symlink_to(outside)


def _symlink_below(root: Path, outside: Path) -> None:
    pod = root / "kubepods.slice/kubepods-pod11111111_aaaa_bbbb_cccc_000000000001.slice"
    pod.parent.mkdir()
    pod.symlink_to(outside)


def _fifo_for_a_file(root: Path, outside: Path) -> None:
    (root / "kubepods.slice").mkdir()
    os.mkfifo(root / "kubepods.slice/cpu.weight")


def _socket_for_a_file(root: Path, outside: Path) -> None:
    (root / "kubepods.slice").mkdir()
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(root / "kubepods.slice/memory.max"))


def _directory_for_a_file(root: Path, outside: Path) -> None:
    (root / "kubepods.slice/memory.min").mkdir(parents=True)


def _hard_link_for_a_file(root: Path, outside: Path) -> None:
    (root / "kubepods.slice").mkdir()
    (outside / "secret").write_text("keep\n")
    os.link(outside / "secret", root / "kubepods.slice/memory.max")


def _symlink_for_a_file(root: Path, outside: Path) -> None:
    (root / "kubepods.slice").mkdir()
    (outside / "secret").write_text("keep\n")
    (root / "kubepods.slice/memory.low").symlink_to(outside / "secret")


#: (what is in the way, the error the apply and its dry run give, after the root)
IN_THE_WAY: list[tuple[Callable[[Path, Path], None], str]] = [
    (_file_in_the_way,
     "kubepods.slice: creating the cgroup: EEXIST: something that is not a directory is in the way"),
    (_symlink_out_of_the_root,
     "kubepods.slice: creating the cgroup: ELOOP: a symlink is in the way (refusing to follow it out of the root)"),
    (_symlink_below,
     "kubepods.slice/kubepods-pod11111111_aaaa_bbbb_cccc_000000000001.slice: creating the cgroup: ELOOP: a "
     "symlink is in the way (refusing to follow it out of the root)"),
    (_fifo_for_a_file,
     "kubepods.slice/cpu.weight: writing '274': ENXIO: not a regular file: a FIFO (named pipe) is in its place"),
    (_socket_for_a_file,
     "kubepods.slice/memory.max: writing '16210984960': ENXIO: not a regular file: a socket is in its place"),
    (_directory_for_a_file, "kubepods.slice/memory.min: writing '0': EISDIR: Is a directory"),
    (_hard_link_for_a_file,
     "kubepods.slice/memory.max: writing '16210984960': EMLINK: refusing a file with other hard links"),
    (_symlink_for_a_file,
     "kubepods.slice/memory.low: writing '0': ELOOP: a symlink is in the way (refusing to follow it out of the "
     "root)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "message"), [pytest.param(f, m, id=f.__name__.strip("_")) for f, m in IN_THE_WAY]
)
def test_a_dry_run_fails_where_the_apply_fails(
    tmp_path: Path, setup: Callable[[Path, Path], None], message: str
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    setup(root, outside)
    before = _tree(root, outside)

    dry = _cli(root, "--dry-run")
    assert dry.exit_code == 2, dry.output
    assert _errors(dry) == [f"error: {root}/{message}"]
    assert not any(line.startswith(("note: would write", "mkdir ", "write ")) for line in dry.output.splitlines())
    assert _tree(root, outside) == before

    real = _cli(root)
    assert real.exit_code == 2, real.output
    assert [ROLLED_BACK.sub("", line) for line in _errors(real)] == _errors(dry)
    assert _tree(root, outside) == before  # refused, and what it created was removed again


def test_a_file_in_the_way_of_a_v1_hierarchy_fails_the_dry_run(tmp_path: Path) -> None:
    (tmp_path / "cpuset").mkdir()
    (tmp_path / "cpuset/kubepods").write_text("")
    before = _tree(tmp_path)
    dry = _cli(tmp_path, "--dry-run", driver="cgroupfs", version="1")
    real = _cli(tmp_path, driver="cgroupfs", version="1")
    expected = f"error: {tmp_path}/cpuset/kubepods: creating the cgroup: EEXIST: something that is not a " \
        "directory is in the way"  # fmt: skip
    assert (dry.exit_code, _errors(dry)) == (2, [expected])
    assert (real.exit_code, [ROLLED_BACK.sub("", line) for line in _errors(real)]) == (2, [expected])
    assert _tree(tmp_path) == before


def test_a_dry_run_of_an_apply_that_succeeds_still_succeeds_and_writes_nothing(tmp_path: Path) -> None:
    assert _cli(tmp_path).exit_code == 0
    (tmp_path / "kubepods.slice/cpu.weight").write_text("5\n")  # an existing file of podnuma's: rewritable
    before = _tree(tmp_path)
    dry = _cli(tmp_path, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "write kubepods.slice/cpu.weight '274'" in dry.output.splitlines()
    assert _tree(tmp_path) == before


def _apply_outcome(tree: Beneath, rel: str, create: bool) -> int:
    try:
        fd, _ = tree.open_write(rel, create=create, single_link=True)
    except OSError as err:
        return err.errno or -1
    os.close(fd)
    return 0


def _check_outcome(tree: Beneath, rel: str, create: bool) -> int:
    try:
        tree.check_write(rel, create=create, single_link=True)
    except OSError as err:
        return err.errno or -1
    return 0


@pytest.mark.parametrize("create", [True, False], ids=["plain", "cgroupfs"])
def test_check_write_foresees_what_open_write_answers(tmp_path: Path, create: bool) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "regular").write_text("1\n")
    (tmp_path / "elsewhere").write_text("x\n")
    os.link(tmp_path / "elsewhere", d / "linked")
    (d / "symlink").symlink_to(tmp_path / "elsewhere")
    (d / "dangling").symlink_to(tmp_path / "nothing")
    os.mkfifo(d / "fifo")
    (d / "dir").mkdir()
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(d / "sock"))
        names = ["regular", "linked", "symlink", "dangling", "fifo", "dir", "sock", "missing"]
        with Beneath(tmp_path) as tree:
            predicted = {n: _check_outcome(tree, f"d/{n}", create) for n in names}
            assert not (d / "missing").exists()  # the check created nothing
            actual = {n: _apply_outcome(tree, f"d/{n}", create) for n in names}
    assert predicted == actual
    assert predicted["linked"] == errno.EMLINK and predicted["fifo"] == errno.ENXIO
    assert predicted["missing"] == (0 if create else errno.ENOENT)


def test_check_mkdir_foresees_what_mkdir_answers(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "link").symlink_to(tmp_path)
    (tmp_path / "dir").mkdir()
    with Beneath(tmp_path) as tree:
        assert tree.check_mkdir("new") is True and not (tmp_path / "new").exists()
        assert tree.check_mkdir("dir") is False
        for name, code in (("file", errno.EEXIST), ("link", errno.ELOOP)):
            with pytest.raises(OSError) as err:
                tree.check_mkdir(name)
            assert err.value.errno == code
            with pytest.raises(OSError) as err:
                tree.mkdir(name)
            assert err.value.errno == code


# ------------------------------------ 2. a cgroup listing a process stays


STALE = "kubepods.slice/kubepods-podDEAD.slice"
BUSY = f"stale {STALE} (not in the plan, cannot remove: EBUSY: it still holds processes)"


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run"])
def test_a_stale_pod_cgroup_listing_a_process_is_kept_as_stale(tmp_path: Path, dry_run: bool) -> None:
    stale = tmp_path / STALE
    stale.mkdir(parents=True)
    (stale / "cgroup.procs").write_text("1234\n")
    (stale / "cpu.weight").write_text("4\n")
    res = _cli(tmp_path, *(["--dry-run"] if dry_run else []))
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert BUSY in lines
    assert not any(line.startswith(f"rmdir {STALE}") for line in lines)
    assert "warning: 1 cgroups of pods no longer in the plan are left (see the 'stale' lines)" in lines
    assert (stale / "cgroup.procs").read_text() == "1234\n"
    assert (stale / "cpu.weight").read_text() == "4\n"


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run"])
def test_a_busy_container_keeps_its_pod_and_an_emptied_one_goes(tmp_path: Path, dry_run: bool) -> None:
    container = tmp_path / STALE / "cri-containerd-abc.scope"
    container.mkdir(parents=True)
    (container / "cgroup.procs").write_text("77\n88\n")
    (tmp_path / STALE / "cgroup.procs").write_text("")
    lines = _cli(tmp_path, *(["--dry-run"] if dry_run else [])).output.splitlines()
    assert f"stale {STALE}/cri-containerd-abc.scope (not in the plan, cannot remove: EBUSY: it still " \
        "holds processes)" in lines  # fmt: skip
    assert f"stale {STALE} (a cgroup below it stays)" in lines
    assert container.is_dir()
    (container / "cgroup.procs").write_text("\n")  # the processes are gone
    res = _cli(tmp_path, *(["--dry-run"] if dry_run else []))
    assert res.exit_code == 0, res.output
    assert [line for line in res.output.splitlines() if STALE in line] == [
        f"rmdir {STALE}/cri-containerd-abc.scope (not in the plan)",
        f"rmdir {STALE} (not in the plan)",
    ]
    assert (tmp_path / STALE).exists() == dry_run


@pytest.mark.parametrize("name", ["cgroup.procs", "tasks"])
def test_v1_tasks_or_procs_listing_a_process_keep_the_cgroup(tmp_path: Path, name: str) -> None:
    stale = tmp_path / "cpuset/kubepods/podgone"
    stale.mkdir(parents=True)
    (stale / name).write_text("4321\n")
    res = _cli(tmp_path, driver="cgroupfs", version="1")
    assert res.exit_code == 0, res.output
    assert "stale cpuset/kubepods/podgone (not in the plan, cannot remove: EBUSY: it still holds " \
        "processes)" in res.output.splitlines()  # fmt: skip
    assert (stale / name).read_text() == "4321\n"


def test_remove_plan_leaves_a_cgroup_listing_a_process(tmp_path: Path) -> None:
    plan = CgroupPlan(driver="cgroupfs", version=2, step=None, nodes=(
        CgroupNode(path="kubepods", kind="node", writer="kubelet"),
        CgroupNode(path="kubepods/poda", kind="pod", writer="kubelet", files=(CgroupFile("cpu.weight", "4"),)),
    ))  # fmt: skip
    apply_plan(plan, tmp_path)
    (tmp_path / "kubepods/poda/cgroup.procs").write_text("99\n")
    assert remove_plan(plan, tmp_path) == ["kubepods/poda", "kubepods"]
    assert (tmp_path / "kubepods/poda/cgroup.procs").read_text() == "99\n"
    (tmp_path / "kubepods/poda/cgroup.procs").write_text("")
    assert remove_plan(plan, tmp_path) == []
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------- 3. --cgroup-root as the kubelet reads it


def _plan_cli(driver: str, cgroup_root: str, *extra: str) -> Result:
    return CliRunner().invoke(
        cli,
        ["cgroups", "plan", str(FULL), "--driver", driver, "--cgroup-version", "2", "--cgroup-root", cgroup_root,
         *extra],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("value", "slice_name"),
    [("a//b", "a--b-kubepods.slice"), ("a/", "a--kubepods.slice"), ("/a/", "a--kubepods.slice"),
     ("//a", "-a-kubepods.slice"), ("//", "--kubepods.slice"), ("x-y//z", "x_y--z-kubepods.slice")],
)  # fmt: skip
@pytest.mark.parametrize("command", ["plan", "apply"])
def test_systemd_refuses_an_empty_cgroup_root_component_as_the_kubelet_panics(
    tmp_path: Path, command: str, value: str, slice_name: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    res = _plan_cli("systemd", value) if command == "plan" else _cli(root, "--cgroup-root", value)
    assert res.exit_code == 2
    assert res.output.splitlines() == [
        f"error: --cgroup-root: {value!r} has an empty component (two '/' in a row, or one at the end); "
        f"the kubelet with the systemd driver would panic at start (ToSystemd: ExpandSlice: invalid slice "
        f"name: {slice_name})"
    ]
    assert list(root.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "same_as"),
    [("a//b", "a/b"), ("a/", "a"), ("/a/", "a"), ("//a", "a"), ("//", "/"), ("/a//b/", "a/b")],
)
def test_cgroupfs_drops_empty_cgroup_root_components_as_path_join_does(value: str, same_as: str) -> None:
    res, ref = _plan_cli("cgroupfs", value, "-o", "json"), _plan_cli("cgroupfs", same_as, "-o", "json")
    assert res.exit_code == 0 and ref.exit_code == 0, res.output
    assert json.loads(res.output) == json.loads(ref.output)
    paths = [n["path"] for n in json.loads(res.output)["cgroups"]]
    assert f"/{same_as.strip('/')}/kubepods".replace("//", "/") in paths


def test_parse_cgroup_root() -> None:
    assert parse_cgroup_root("", "systemd") == parse_cgroup_root("/", "systemd") == ()
    assert parse_cgroup_root("/a/b", "systemd") == ("a", "b")
    assert parse_cgroup_root("a//b", "cgroupfs") == ("a", "b")
    assert parse_cgroup_root("//", "cgroupfs") == ()
    with pytest.raises(InputError) as err:
        parse_cgroup_root("a/", "systemd", "cgroupRoot")
    assert err.value.path == "cgroupRoot" and "would panic" in err.value.message


def _ro_apply(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``cgroups apply`` with ``root`` bind-mounted read-only, in a mount
    namespace of its own (gone when the command ends)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return subprocess.run(
        ["unshare", "--mount", "sh", "-c", script, str(root), sys.executable, "-m", "podnuma.cli",
         "cgroups", "apply", str(FULL), "--driver", "systemd", "--cgroup-version", "2", "--root", str(root),
         *extra],
        capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip


@pytest.mark.parametrize("existing", [False, True], ids=["new cgroup", "existing file"])
def test_a_read_only_root_fails_the_dry_run_too(tmp_path: Path, existing: bool) -> None:
    """EROFS from ``faccessat``: for the first ``mkdir`` of an empty root,
    and for the first write of an applied tree (every cgroup there, the
    cpusets already right)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) for a read-only bind mount")
    if existing:
        assert _cli(tmp_path).exit_code == 0
    probe = subprocess.run(["unshare", "--mount", "mount", "--bind", str(tmp_path), str(tmp_path)],
                           capture_output=True, text=True, check=False)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"cannot bind-mount in a mount namespace: {probe.stderr.strip()}")
    dry, real = _ro_apply(tmp_path, "--dry-run"), _ro_apply(tmp_path)
    where = "kubepods.slice/cpu.weight: writing '274'" if existing else "kubepods.slice: creating the cgroup"
    expected = [f"error: {tmp_path}/{where}: EROFS: read-only file system"]
    assert (dry.returncode, dry.stderr.splitlines()) == (2, expected)
    assert (real.returncode, real.stderr.splitlines()) == (2, expected)


def _v2_plan() -> CgroupPlan:
    return CgroupPlan(driver="cgroupfs", version=2, step=None, nodes=(
        CgroupNode(path="kubepods", kind="node", writer="kubelet", cpus=CPUSet.parse("1"), mems=(0,),
                   files=(CgroupFile("cpu.weight", "4"),)),
    ))  # fmt: skip


@pytest.mark.parametrize("offered", ["cpu memory pids", "cpuset cpu memory pids"])
def test_a_dry_run_on_cgroup2_foresees_a_controller_the_root_does_not_offer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offered: str
) -> None:
    """A stand-in for a cgroup2 mount (a directory taken for one): the
    kernel would give the new cgroup only the controllers its parent
    offers, so without ``cpuset`` there ``cpuset.mems`` is missing
    (``ENOENT``) -- in the real apply, and foreseen by the dry run."""
    monkeypatch.setattr("podnuma.cgroups.apply.is_cgroupfs", lambda path: True)
    (tmp_path / "cgroup.controllers").write_text(offered + "\n")
    (tmp_path / "cgroup.subtree_control").write_text("\n")
    message = "writing '0': ENOENT: no such file: the controller is not enabled in this cgroup"
    if "cpuset" in offered:
        report = apply_plan(_v2_plan(), tmp_path, dry_run=True)
        assert [str(op) for op in report.operations] == [
            "write cgroup.subtree_control '+cpuset +cpu +memory +pids'", "mkdir kubepods",
            "write kubepods/cpuset.mems '0'", "write kubepods/cpuset.cpus '1'", "write kubepods/cpu.weight '4'",
        ]  # fmt: skip
        return
    with pytest.raises(CgroupWriteError) as dry:
        apply_plan(_v2_plan(), tmp_path, dry_run=True)
    assert (dry.value.file, dry.value.message) == (str(tmp_path / "kubepods/cpuset.mems"), message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cgroup.controllers", "cgroup.subtree_control"]
    with pytest.raises(CgroupWriteError) as real:  # a directory: no kernel gives the new cgroup its files
        apply_plan(_v2_plan(), tmp_path)
    assert (real.value.file, ROLLED_BACK.sub("", real.value.message)) == (dry.value.file, message)

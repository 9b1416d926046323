"""A stale pod cgroup holding a tree of cgroups thousands of levels deep
(made by the runtime, a workload, or planted): the kubelet removes such a
tree leaves first (libcontainer's ``RemovePath``, by path, so only as deep
as the kernel's ``PATH_MAX`` allows). ``cgroups apply`` (and
:func:`remove_plan`, the agent's removal of a pod's cgroups) walks it with
a stack of its own, not by recursion, and with a bounded number of
directory descriptors (:data:`podnuma.cgroups.beneath.DIR_CACHE`): the
tree is removed, or past ``PATH_MAX`` kept and reported, never an internal
error and never a write failing for want of descriptors.

The trees are made and removed by descriptor (their paths are longer than
``PATH_MAX``; ``shutil.rmtree`` and pytest's own clean-up recurse)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import podnuma
from podnuma.cgroups import CgroupPlan, apply_plan, beneath, remove_plan
from podnuma.cgroups.plan import CgroupFile, CgroupNode
from podnuma.inputs.text import TextInput
from podnuma.service import cgroups as cgroups_service

FULL = Path(__file__).parent / "full.yaml"
SRC = str(Path(podnuma.__file__).parents[1])
STALE = "kubepods/podcast"  # a pod cgroup full.yaml never plans


def _apply(root: Path, *extra: str, nofile: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    return subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "cgroups", "apply", str(FULL), "--driver", "cgroupfs",
         "--cgroup-version", "2", "--root", str(root), *extra],
        capture_output=True, text=True, check=False, timeout=300,
        env={**os.environ, "PYTHONPATH": SRC}, preexec_fn=limit,
    )  # fmt: skip


def nest(top: Path, depth: int, name: str = "d") -> None:
    """``top/d/d/.../d``: ``depth`` directories below ``top`` (made if
    missing), by descriptor."""
    top.mkdir(exist_ok=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
    finally:
        os.close(fd)


def depth(top: Path, name: str = "d") -> int:
    """How many ``name`` directories are nested below ``top``."""
    n = 0
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while name in os.listdir(fd):
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd, n = nxt, n + 1
    finally:
        os.close(fd)
    return n


def unnest(top: Path, name: str = "d") -> None:
    """Remove the chain below ``top``, a level at a time from the top: its
    second level renamed up beside the first, the first removed."""
    if not top.is_dir():
        return
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while name in os.listdir(fd):
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            try:
                below = name in os.listdir(inner)
            finally:
                os.close(inner)
            if below:
                os.rename(f"{name}/{name}", ".up", src_dir_fd=fd, dst_dir_fd=fd)
                os.rmdir(name, dir_fd=fd)
                os.rename(".up", name, src_dir_fd=fd, dst_dir_fd=fd)
            else:
                os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    """A plain directory holding full.yaml's cgroups; whatever deep chain a
    test leaves under it is removed afterwards."""
    first = _apply(tmp_path)
    assert first.returncode == 0, first.stderr
    yield tmp_path
    for top in tmp_path.rglob("pod*"):
        unnest(top)


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run"])
def test_a_stale_tree_1200_cgroups_deep_is_removed_leaves_first(root: Path, dry_run: bool) -> None:
    nest(root / STALE, 1200)
    res = _apply(root, *(["--dry-run"] if dry_run else []))
    assert res.returncode == 0, res.stderr[-2000:]
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    removed = [line for line in res.stdout.splitlines() if line.startswith(f"rmdir {STALE}")]
    # every level, the deepest first, the pod's cgroup last
    assert len(removed) == 1201
    assert removed[0] == f"rmdir {STALE}{'/d' * 1200} (not in the plan)"
    assert removed[-1] == f"rmdir {STALE} (not in the plan)"
    assert (root / STALE).exists() is dry_run
    if dry_run:
        assert depth(root / STALE) == 1200


def test_a_deep_stale_tree_does_not_use_up_the_descriptors(root: Path) -> None:
    """400 levels, the apply run with 256 descriptors (soft limit): the walk
    holds a bounded number, so the apply's own writes still get theirs."""
    nest(root / STALE, 400)
    res = _apply(root, nofile=256)
    assert "EMFILE" not in res.stderr, res.stderr
    assert res.returncode == 0, res.stderr
    assert f"rmdir {STALE} (not in the plan)" in res.stdout.splitlines()
    assert not (root / STALE).exists()


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "one-component-at-a-time"])
def test_the_walk_holds_a_bounded_number_of_descriptors(
    root: Path, monkeypatch: pytest.MonkeyPatch, openat2: bool
) -> None:
    """Both ways of opening a directory beneath the root: the descriptors
    open at any point of the walk stay within the cache's bound, whatever
    the depth."""
    if openat2 and not beneath.openat2_available():
        pytest.skip("openat2 is not available here")
    monkeypatch.setattr(beneath, "_USE_OPENAT2", openat2)
    nest(root / STALE, 300)
    baseline = len(os.listdir("/proc/self/fd"))
    peak = [0]
    listdir = beneath.Beneath.listdir

    def counting(self: beneath.Beneath, rel: str) -> list[tuple[str, int]]:
        got = listdir(self, rel)
        peak[0] = max(peak[0], len(os.listdir("/proc/self/fd")) - baseline)
        return got

    monkeypatch.setattr(beneath.Beneath, "listdir", counting)
    report = apply_plan(_full_plan(), root)
    assert [op.path for op in report.operations if op.action == "rmdir"][-1] == STALE
    assert not (root / STALE).exists()
    assert 0 < peak[0] <= beneath.DIR_CACHE + 4  # (+ the root, a listing's own, /proc/self/fd's)


def _full_plan() -> CgroupPlan:
    return cgroups_service.plan(TextInput.read(str(FULL), what="scenario"), step=None, driver="cgroupfs", version=2)


def test_a_stale_tree_deeper_than_path_max_is_kept_and_reported(root: Path) -> None:
    """As the kubelet's removal by path fails there (``ENAMETOOLONG``): the
    cgroup at the limit is kept, and so is every cgroup above it; nothing
    below the limit is touched, and the apply goes on."""
    levels = (4096 - len(os.fsencode(str(root / STALE)))) // 2 + 20  # past PATH_MAX
    nest(root / STALE, levels)
    res = _apply(root)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = res.stdout.splitlines()
    too_long = [line for line in lines if line.startswith(f"stale {STALE}/") and "ENAMETOOLONG" in line]
    assert len(too_long) == 1
    assert too_long[0].endswith("(not in the plan, cannot remove: ENAMETOOLONG: its path is 4096 bytes or "
                                "longer (the kubelet's removal goes by path))")
    assert f"stale {STALE} (a cgroup below it stays)" in lines
    assert not any(line.startswith(f"rmdir {STALE}") for line in lines)
    assert depth(root / STALE) == levels
    assert "warning:" in res.stderr  # (the stale cgroups are counted)


def test_remove_plan_removes_the_cgroups_below_a_pods_but_not_its_neighbours(tmp_path: Path) -> None:
    """The agent's removal of a gone pod's cgroups: the pod's cgroup goes
    with everything below it (as ``RemovePath`` removes sub-cgroups first),
    however deep; the kubepods cgroup above it stays, with the other pod."""
    pods = CgroupPlan(driver="cgroupfs", version=2, step=None, nodes=(
        CgroupNode(path="kubepods", kind="node", writer="kubelet"),
        CgroupNode(path="kubepods/poda", kind="pod", writer="kubelet", files=(CgroupFile("cpu.weight", "4"),)),
        CgroupNode(path="kubepods/podb", kind="pod", writer="kubelet", files=(CgroupFile("cpu.weight", "4"),)),
    ))  # fmt: skip
    apply_plan(pods, tmp_path)
    try:
        nest(tmp_path / "kubepods/poda", 1500)
        gone = CgroupPlan(driver="cgroupfs", version=2, step=None, nodes=(pods.nodes[1],))
        assert remove_plan(gone, tmp_path) == ["kubepods"]  # (podb is there still)
        assert not (tmp_path / "kubepods/poda").exists()
        assert (tmp_path / "kubepods/podb/cpu.weight").read_text() == "4"
    finally:
        unnest(tmp_path / "kubepods/poda")

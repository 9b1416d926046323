"""``cgroups apply`` against a concurrent symlink swap.

Another process keeps replacing directories under the root (``kubepods``, a QoS
tier, a pod's cgroup) with symlinks to a directory outside it, and puts them
back, while 1,000 applies of the same plan run (more, until one has met a
symlink). An apply may be refused (it met a symlink) or succeed; at least
one must have been refused, and nothing may ever be created outside the root.
Run once with ``openat2`` (where the kernel has it) and once with the
step-by-step ``O_NOFOLLOW`` walk.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from podnuma.cgroups import CgroupPlan, apply_plan, beneath, plan_cgroups
from podnuma.errors import InputError
from podnuma.inputs.scenario import load_scenario

HERE = Path(__file__).parent
APPLIES = 1000
#: applies at most, when none of the first APPLIES met a symlink
MAX_APPLIES = 20_000


def _plan() -> CgroupPlan:
    return plan_cgroups(load_scenario(HERE / "full.yaml"), driver="cgroupfs", version=2)


def _swapper(root: Path, outside: Path, targets: list[str], stop: Any, swaps: Any) -> None:
    n = 0
    while not stop.is_set():
        for rel in targets:
            d = root / rel
            aside = d.with_name(d.name + ".aside")
            try:
                os.rename(d, aside)
            except OSError:
                continue
            try:
                os.symlink(outside, d)
                n += 1
            except OSError:
                pass
            os.sched_yield()
            if d.is_symlink():
                os.unlink(d)
            try:
                os.rename(aside, d)
            except OSError:  # the apply made a fresh one meanwhile: keep that
                shutil.rmtree(aside, ignore_errors=True)
        swaps.value = n


@pytest.mark.parametrize("openat2", [True, False], ids=["openat2", "fd-walk"])
def test_no_write_escapes_the_root_under_a_symlink_race(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, openat2: bool
) -> None:
    if openat2 and not beneath.openat2_available():
        pytest.skip("this kernel has no openat2 (the fd walk is tested below)")
    monkeypatch.setattr(beneath, "_USE_OPENAT2", openat2)
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    plan = _plan()
    apply_plan(plan, root)
    pod = next(n.path for n in plan.nodes if n.kind == "pod" and n.path.startswith("kubepods/burstable/"))
    targets = ["kubepods", "kubepods/burstable", pod]
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    swaps = ctx.Value("q", 0)
    swapper = ctx.Process(target=_swapper, args=(root, outside, targets, stop, swaps))
    swapper.start()
    refused = 0
    try:
        applies = 0
        # at least APPLIES, and on until one met a symlink (the race ran)
        while applies < APPLIES or (refused == 0 and applies < MAX_APPLIES):
            applies += 1
            try:
                apply_plan(plan, root)
            except InputError as err:
                refused += 1
                assert "\n" not in str(err)
    finally:
        stop.set()
        swapper.join(30)
    escaped = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))
    print(f"{applies} applies, {swaps.value} symlink swaps, {refused} applies refused, {len(escaped)} files outside")
    assert swaps.value > 0
    assert refused > 0, "no apply met a symlink: the race was not exercised"
    assert escaped == []

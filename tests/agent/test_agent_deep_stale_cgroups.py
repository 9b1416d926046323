"""The agent with ``--cgroup-root`` keeps running whatever stale pod cgroup
it finds there: a tree thousands of levels deep is removed at its first
sync (as the kubelet removes an orphaned pod's cgroup, sub-cgroups first),
with a walk of its own (no recursion) holding a bounded number of
descriptors; one it cannot remove (here: deeper than the kernel's
``PATH_MAX``, where the kubelet's removal by path fails too) is kept and
logged once, by its top (``Cgroups not removed``), and every later sync
runs as before."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.helpers import AgentProcess, classic_pod, write_manifest
from tests.cgroups.test_deep_stale_trees import depth, nest, unnest


@pytest.fixture
def base() -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="png", dir="/tmp"))  # (a short socket path)
    yield where
    unnest(where / "cg" / "kubepods" / "podcast")
    shutil.rmtree(where, ignore_errors=True)


def _agent(base: Path) -> AgentProcess:
    (base / "cg" / "kubepods").mkdir(parents=True)
    agent = AgentProcess(base, "--cgroup-root", str(base / "cg"), "--cgroup-version", "2")
    write_manifest(agent.manifests, "p1", classic_pod("p1"))
    return agent


def test_a_deep_stale_tree_under_the_cgroup_root_is_removed(base: Path) -> None:
    agent = _agent(base)
    nest(base / "cg" / "kubepods" / "podcast", 1200)
    agent.start()
    try:
        st = agent.wait(lambda s: s["syncs"] >= 3, "three syncs (--resync 1)")
        assert st["pods"][0]["admitted"] is True
        assert "internal error" not in agent.log() and "RecursionError" not in agent.log()
        assert not (base / "cg" / "kubepods" / "podcast").exists()
        assert list((base / "cg" / "kubepods").glob("pod*/cpu.weight"))  # (p1's cgroup written)
        assert not [r for r in agent.log_records() if r["msg"] == "Cgroups not removed"]
    finally:
        assert agent.proc is not None
        if agent.proc.poll() is None:
            assert agent.signal() == 0


def test_a_stale_tree_past_path_max_is_kept_and_logged_once(base: Path) -> None:
    agent = _agent(base)
    top = base / "cg" / "kubepods" / "podcast"
    levels = (4096 - len(os.fsencode(str(top)))) // 2 + 20
    nest(top, levels)
    agent.start()
    try:
        agent.wait(lambda s: s["syncs"] >= 4, "four syncs (--resync 1)")
        kept = [r for r in agent.log_records() if r["msg"] == "Cgroups not removed"]
        assert len(kept) == 1  # (not again at every resync)
        assert kept[0]["level"] == "warning" and kept[0]["count"] == 1
        assert kept[0]["cgroups"] == "kubepods/podcast"
        assert depth(top) == levels
        assert list((base / "cg" / "kubepods").glob("pod*/cpu.weight"))
    finally:
        assert agent.proc is not None
        if agent.proc.poll() is None:
            assert agent.signal() == 0

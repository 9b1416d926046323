from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from podnuma.fleet.execute import partition, run_dask, run_processes, run_serial
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.report import fleet_report
from podnuma.fleet.whatif import parse_what_if

WHAT_IFS = [parse_what_if("pod-level")]


@pytest.fixture(scope="module")
def serial(small_fleet: Path) -> dict[str, Any]:
    fleet = load_fleet([small_fleet])
    return fleet_report(fleet, run_serial(fleet.nodes, WHAT_IFS), [w.label for w in WHAT_IFS])


def _report(small_fleet: Path, run: Any) -> dict[str, Any]:
    fleet = load_fleet([small_fleet])
    return fleet_report(fleet, run(fleet.nodes), [w.label for w in WHAT_IFS])


def test_the_fleet_is_not_trivial(serial: dict[str, Any]) -> None:
    s = serial["summary"]
    assert serial["fleet"]["nodes"] == 10 and serial["fleet"]["podsReplayed"] == 10 * 24
    assert s["as running"]["sidecarOnlyCpus"] > 0
    assert s["pod-level"]["sidecarOnlyCpus"] < s["as running"]["sidecarOnlyCpus"]


def test_partitioning_does_not_change_the_result(small_fleet: Path, serial: dict[str, Any]) -> None:
    fleet = load_fleet([small_fleet])
    from podnuma.fleet.replay import replay_partition

    parts = partition(fleet.nodes, parts_hint=9)
    assert len(parts) > 2
    nodes = sorted((r for p in parts for r in replay_partition(p, WHAT_IFS)), key=lambda r: r["name"])
    assert fleet_report(fleet, nodes, [w.label for w in WHAT_IFS]) == serial


def test_local_processes_give_the_same_report(small_fleet: Path, serial: dict[str, Any]) -> None:
    assert _report(small_fleet, lambda nodes: run_processes(nodes, WHAT_IFS, 2)) == serial


def test_dask_local_cluster_gives_the_same_report(
    small_fleet: Path, serial: dict[str, Any], dask_client: Any
) -> None:
    pids = set(dask_client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids  # two worker processes, not this one
    assert _report(small_fleet, lambda nodes: run_dask(nodes, WHAT_IFS, dask_client)) == serial


def test_a_worker_killed_mid_run_is_replaced_and_the_report_is_the_same(
    small_fleet: Path, serial: dict[str, Any], dask_client: Any
) -> None:
    before = dask_client.run(os.getpid)
    victim = sorted(before.values())[0]
    killed: list[int] = []

    def progress(_: int) -> None:
        if not killed:  # the first partition is done, the others are in flight
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    got = _report(small_fleet, lambda nodes: run_dask(nodes, WHAT_IFS, dask_client, progress))
    assert killed == [victim]
    assert got == serial
    dask_client.wait_for_workers(2, timeout=60)
    assert victim not in dask_client.run(os.getpid).values()

"""On Dask, the replay follows the pods: a worker keeps the pods of the dumps
it indexed, decoded once, and the partitions of their nodes go to it; the
report is the one of one process."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from podnuma.fleet import podscan
from podnuma.fleet.execute import DaskExecutor, routed_partition, run_serial
from podnuma.fleet.generate import generate_fleet
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.report import fleet_report
from podnuma.fleet.whatif import parse_what_if

from .conftest import need

WHAT_IFS = [parse_what_if("pod-level")]


@pytest.fixture(scope="module")
def three_dumps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("follow") / "fleet"
    generate_fleet(d, nodes=300, pods_per_node=6, seed=11)
    assert len(list((d / "pods").glob("*.json"))) == 3
    return d


def _serial(d: Path) -> dict[str, Any]:
    fleet = load_fleet([d])
    return fleet_report(fleet, run_serial(fleet.nodes, WHAT_IFS), [w.label for w in WHAT_IFS])


def _held() -> list[str]:
    return sorted(podscan._HELD)


def _one_worker() -> tuple[Any, Any]:
    need("distributed")
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",  # type: ignore[no-untyped-call]
                           dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)
    return Client(cluster), cluster  # type: ignore[no-untyped-call]


def test_a_worker_replays_the_pods_it_decoded_when_indexing(three_dumps: Path) -> None:
    client, cluster = _one_worker()
    try:
        ex = DaskExecutor(client)
        ex._release = lambda: None  # type: ignore[method-assign]  # what the replay did not take stays, to be seen
        fleet = load_fleet([three_dumps], map_files=ex.map, parts=ex.parts)
        (worker, held), = client.run(_held).items()
        dumps = sorted(str(p) for p in (three_dumps / "pods").glob("*.json"))
        assert held == dumps
        assert ex.holders == {d: [(0, worker)] for d in dumps}
        results = ex.replay(fleet.nodes, WHAT_IFS)
        # every range was read from the pods kept (a range read back from its
        # file leaves its dump's pods kept)
        assert client.run(_held) == {worker: []}
        assert fleet_report(fleet, results, [w.label for w in WHAT_IFS]) == _serial(three_dumps)
    finally:
        client.close()
        cluster.close()


def test_a_fleet_too_large_to_keep_is_read_back_as_before(
    three_dumps: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, cluster = _one_worker()
    try:
        ex = DaskExecutor(client)
        monkeypatch.setattr(podscan, "HOLD_BYTES", 1000)  # the dumps are larger: nothing kept
        fleet = load_fleet([three_dumps], map_files=ex.map, parts=ex.parts)
        assert ex.holders == {}
        assert client.run(_held) == {next(iter(client.run(_held))): []}
        results = ex.replay(fleet.nodes, WHAT_IFS)
        assert fleet_report(fleet, results, [w.label for w in WHAT_IFS]) == _serial(three_dumps)
    finally:
        client.close()
        cluster.close()


def test_two_workers_give_the_report_of_one_process_and_keep_nothing_after(
    three_dumps: Path, dask_client: Any
) -> None:
    ex = DaskExecutor(dask_client)
    fleet = load_fleet([three_dumps], map_files=ex.map, parts=ex.parts)
    workers = set(dask_client.run(_held))
    assert {w for ps in ex.holders.values() for _, w in ps} <= workers and len(ex.holders) == 3
    assert all(len(ps) == 1 and ps[0][0] == 0 for ps in ex.holders.values())  # (small dumps: read whole)
    for worker, held in dask_client.run(_held).items():
        assert held == sorted(f for f, ps in ex.holders.items() if ps[0][1] == worker)
    results = ex.replay(fleet.nodes, WHAT_IFS)
    assert all(held == [] for held in dask_client.run(_held).values())
    assert ex.holders == {}
    assert fleet_report(fleet, results, [w.label for w in WHAT_IFS]) == _serial(three_dumps)


def test_routed_partitions_keep_each_worker_s_nodes_together(three_dumps: Path) -> None:
    fleet = load_fleet([three_dumps])
    dumps = sorted(str(p) for p in (three_dumps / "pods").glob("*.json"))
    holders = {dumps[0]: [(0, "tcp://a")], dumps[1]: [(0, "tcp://b")]}  # the third dump kept nowhere
    parts, hints = routed_partition(fleet.nodes, holders, runners=2)
    assert len(parts) == len(hints)
    assert sorted(n.name for p in parts for n in p) == sorted(n.name for n in fleet.nodes)
    for part, (where, weight) in zip(parts, hints, strict=True):
        assert weight == sum(max(1, len(n.pods) if n.pods is not None else n.pods_bound) for n in part)
        assert {holders[n.pod_ranges[0][0]][0][1] if n.pod_ranges and n.pod_ranges[0][0] in holders else None
                for n in part} == {where}
    assert {w for w, _ in hints} == {"tcp://a", "tcp://b", None}


def test_a_worker_keeps_at_most_its_share_the_rest_is_shared(three_dumps: Path) -> None:
    """A worker that indexed two of the three dumps keeps the nodes of its
    share of the pods (half, with two workers); the nodes past it, the last
    of its dumps, are partitions any worker takes (``None``)."""
    fleet = load_fleet([three_dumps])
    dumps = sorted(str(p) for p in (three_dumps / "pods").glob("*.json"))
    holders = {dumps[0]: [(0, "tcp://a")], dumps[1]: [(0, "tcp://a")], dumps[2]: [(0, "tcp://b")]}
    parts, hints = routed_partition(fleet.nodes, holders, runners=2)
    total = sum(w for _, w in hints)
    assert total == sum(max(1, n.pods_bound) for n in fleet.nodes)
    kept = {w: sum(x for v, x in hints if v == w) for w in ("tcp://a", "tcp://b", None)}
    assert kept["tcp://a"] <= total / 2 < kept["tcp://a"] + max(n.pods_bound for n in fleet.nodes)
    assert kept["tcp://b"] == sum(n.pods_bound for n in fleet.nodes if n.pod_ranges[0][0] == dumps[2])
    assert kept[None] == total - kept["tcp://a"] - kept["tcp://b"] > 0
    shared = [n for p, (w, _) in zip(parts, hints, strict=True) if w is None for n in p]
    assert {n.pod_ranges[0][0] for n in shared} == {dumps[1]}  # the end of a's dumps
    assert sorted(n.name for p in parts for n in p) == sorted(n.name for n in fleet.nodes)


def test_the_command_keeps_at_most_one_more_runner_s_share() -> None:
    """The pods the command kept (``HERE``: the dumps it indexed while its
    cluster came up): it replays the nodes of at most the share of one
    runner more than the cluster's (it shares their cores); the nodes past
    it are partitions any worker takes."""
    from podnuma.fleet.execute import HERE
    from podnuma.fleet.model import NodeSpec

    def node(i: int, f: str) -> NodeSpec:
        return NodeSpec(name=f"n{i:03d}", pods_bound=10, pod_ranges=((f, i * 100, i * 100 + 50),))

    nodes = [node(i, "a.json") for i in range(30)] + [node(i, "b.json") for i in range(30, 60)]
    parts, hints = routed_partition(nodes, {"a.json": [(0, HERE)], "b.json": [(0, "tcp://w")]}, runners=2)
    kept = {w: sum(x for v, x in hints if v == w) for w in (HERE, "tcp://w", None)}
    assert kept[HERE] == 200  # 600 pods over 3 runners (2 workers and the command)
    assert kept["tcp://w"] == 300 and kept[None] == 100  # a worker's share is half
    here = [n.name for p, (w, _) in zip(parts, hints, strict=True) if w == HERE for n in p]
    assert here == [f"n{i:03d}" for i in range(20)]  # the first of its dump, in order
    assert sorted(n.name for p in parts for n in p) == sorted(n.name for n in nodes)


def test_the_cluster_s_partitions_are_sent_each_holder_s_first_ones_first() -> None:
    from podnuma.fleet.execute import _first_of_each

    hints: list[tuple[str | None, int]] = [(None, 1), (None, 1), ("a", 1), ("a", 1), ("a", 1), ("b", 1)]
    assert _first_of_each(range(6), hints) == [0, 2, 5, 1, 3, 4]
    assert _first_of_each([2, 3, 4], hints) == [2, 3, 4]
    assert _first_of_each([], hints) == []


class _Scheduler:
    """What the client process asks of a scheduler while it waits: the
    workers' threads, none for the first ``empty`` questions."""

    def __init__(self, empty: int) -> None:
        self.asked = 0
        self.empty = empty

        self.waited: list[tuple[int, float]] = []

    def nthreads(self) -> dict[str, int]:
        self.asked += 1
        return {} if self.asked <= self.empty else {"tcp://127.0.0.1:1": 1}

    def wait_for_workers(self, n: int, timeout: float) -> None:
        self.waited.append((n, timeout))
        if self.empty > 10**6:
            raise TimeoutError("no worker")


def test_only_a_cluster_the_command_started_is_asked_for_workers_quickly() -> None:
    import dask

    from podnuma.fleet import execute

    started = _Scheduler(3)
    execute._first_worker(started, object())
    assert (started.asked, started.waited) == (4, [])
    with dask.config.set({"distributed.comm.timeouts.connect": "7s"}):
        running = _Scheduler(3)  # a running cluster: Client.wait_for_workers, bounded
        execute._first_worker(running, None)
        assert (running.asked, running.waited) == (0, [(1, 7.0)])
        never = _Scheduler(10**9)
        with pytest.raises(TimeoutError, match=r"no worker joined the scheduler within 7 s"):
            execute._first_worker(never, None)

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

from .conftest import need

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


def test_pod_keys_sent_packed_count_each_pod_once_as_merging_one_by_one(
    small_fleet: Path, tmp_path: Path
) -> None:
    """The scans of other processes send their pod keys packed and the
    fleet matches them all at once: the counts are those of merging the
    keys one by one, with pods in two, three dumps (one of them YAML, read
    by the general reader) and unbound pods dumped twice."""
    import json
    import shutil

    import yaml

    from podnuma.fleet.inputs import Scan, _classify, assemble, merge_scan, scan_files, walk_inputs

    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    pods_file = sorted((d / "pods").glob("*.json"))[0]
    items = json.loads(pods_file.read_text())["items"]
    assert len(items) > 20
    unbound = [dict(p, spec={k: v for k, v in p["spec"].items() if k != "nodeName"},
                    metadata=dict(p["metadata"], name=f"unbound-{i}", uid=f"u-{i}"))
               for i, p in enumerate(items[:3])]
    (d / "again.json").write_text(json.dumps({"kind": "List", "items": items[:20] + unbound}))
    (d / "third.yaml").write_text(yaml.safe_dump({"kind": "List", "items": items[5:9] + unbound[:1]}))
    (d / "unbound.json").write_text(json.dumps({"kind": "List", "items": unbound}))
    files: list[Path] = []
    walk_inputs(d, Scan(), files)
    one_by_one = Scan()
    for f in files:
        part = Scan()
        _classify(f, part)  # keys left as a mapping
        merge_scan(one_by_one, part)
    packed = Scan()
    for part in scan_files([str(f) for f in files]):
        assert part.packed_keys or not part.pods_total
        merge_scan(packed, part)
    want, got = assemble(one_by_one), assemble(packed)
    # again.json is read first: its pods are found again in pods/, third.yaml, unbound.json
    assert want.pods_duplicated == 20 + (4 + 1) + 3
    assert (got.pods_total, got.pods_duplicated, got.pods_without_node) == (
        want.pods_total, want.pods_duplicated, want.pods_without_node)
    assert {n.name: n.pods_bound for n in got.nodes} == {n.name: n.pods_bound for n in want.nodes}



def test_pod_keys_packed_after_keys_merged_one_by_one_count_each_pod_once(
    small_fleet: Path, tmp_path: Path
) -> None:
    """Scans merged one by one first (their keys kept as a mapping: the
    files read here), then packed ones (read elsewhere): a pod of a packed
    scan already among the mapping's keys, or twice in the packed ones, is
    counted once."""
    from podnuma.fleet.inputs import Scan, _classify, assemble, merge_scan, scan_files, walk_inputs

    d = _pods_again(small_fleet, tmp_path, slice(0, 7), slice(3, 11))
    files: list[Path] = []
    walk_inputs(d, Scan(), files)
    one_by_one = Scan()
    for f in files:
        part = Scan()
        _classify(f, part)
        merge_scan(one_by_one, part)
    mixed = Scan()
    first = files.index(d / "again.json")
    for i, f in enumerate(files):
        merge_scan(mixed, scan_files([str(f)], pack=i > first)[0])
    assert not mixed.pod_keys or mixed.packed_keys
    want, got = assemble(one_by_one), assemble(mixed)
    assert want.pods_duplicated == 7 + 8
    assert (got.pods_total, got.pods_duplicated, got.pods_without_node) == (
        want.pods_total, want.pods_duplicated, want.pods_without_node)
    assert {n.name: n.pods_bound for n in got.nodes} == {n.name: n.pods_bound for n in want.nodes}


def _pods_again(small_fleet: Path, tmp_path: Path, first: slice, then: slice) -> Path:
    """A copy of the fleet with two more dumps, ``again.json`` (read before
    ``pods/``) and ``zz-again.json`` (after it), holding the ``first`` and
    ``then`` pods of its first pods dump."""
    import json
    import shutil

    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    pods_file = sorted((d / "pods").glob("*.json"))[0]
    items = json.loads(pods_file.read_text())["items"]
    (d / "again.json").write_text(json.dumps({"kind": "List", "items": items[first]}))
    (d / "zz-again.json").write_text(json.dumps({"kind": "List", "items": items[then]}))
    return d


@pytest.mark.parametrize("order", ["in order", "reversed", "shuffled", "half never told"])
def test_scans_merged_as_they_arrive_count_as_merged_at_the_end(
    small_fleet: Path, tmp_path: Path, order: str
) -> None:
    """The command merges each batch's scans as soon as those of the batches
    before it are in, and matches their pod keys meanwhile (results come in
    the order the tasks end): with pods in several dumps and a node listed
    in two files, whatever order the results come in, and when only some are
    told as they come, the fleet is the one read in this process."""
    import json
    import random
    from collections.abc import Callable, Sequence

    from podnuma.fleet.inputs import Scan

    d = _pods_again(small_fleet, tmp_path, slice(0, 9), slice(4, 15))
    # a node listed again, later: the last one is used (the order of the files decides)
    node = json.loads((d / "nodes.json").read_text())["items"][0]
    node["metadata"]["labels"]["podnuma.test/listed"] = "again"
    (d / "zz-nodes.json").write_text(json.dumps({"kind": "List", "items": [node]}))
    told: list[int] = []
    batches: list[int] = []

    def mapper(fn: Callable[[Sequence[str]], list[Scan]], args: Sequence[Sequence[str]], *,
               arrived: Callable[[int, list[Scan]], None] | None = None) -> list[list[Scan]]:
        out = [fn(a) for a in args]
        batches.append(len(out))
        when = list(range(len(out)))
        if order == "reversed":
            when.reverse()
        elif order == "shuffled":
            random.Random(7).shuffle(when)
        elif order == "half never told":
            when = when[1::2]
        assert arrived is not None
        for i in when:
            told.append(i)
            arrived(i, out[i])
        return out

    want = load_fleet([d])
    got = load_fleet([d], map_files=mapper, parts=6)
    assert batches[0] >= 4 and len(told) >= batches[0] // 2
    assert want.pods_duplicated == 9 + 11
    assert (got.pods_total, got.pods_duplicated, got.pods_without_node) == (
        want.pods_total, want.pods_duplicated, want.pods_without_node)
    assert got.nodes == want.nodes
    assert got.issues == want.issues
    assert any("listed twice" in i.message for i in got.issues)
    assert [n.labels.get("podnuma.test/listed") for n in got.nodes].count("again") == 1


def test_each_executor_tells_each_result_as_it_comes(dask_client: Any) -> None:
    """``arrived`` is given every result once, with its index, before
    ``done`` is told that index; the results come back in order."""
    from podnuma.fleet.execute import DaskExecutor, Processes, Serial

    for ex in (Serial(), Processes(2), DaskExecutor(dask_client)):
        seen: list[tuple[int, int]] = []
        done: list[int] = []

        def arrived(i: int, r: int, seen: list[tuple[int, int]] = seen,
                    done: list[int] = done) -> None:
            assert i not in done
            seen.append((i, r))

        try:
            out = ex.map(abs, [-3, -1, -4, -1, -5], done.append, arrived)
        finally:
            close = getattr(ex, "close", None)
            if close is not None and not isinstance(ex, DaskExecutor):
                close()
        assert out == [3, 1, 4, 1, 5]
        assert sorted(seen) == list(enumerate(out)), type(ex).__name__
        assert sorted(done) == list(range(5))


def test_each_worker_gets_its_first_task_before_any_gets_a_second(dask_client: Any) -> None:
    """Tasks meant for workers (the replay following the pods): the first
    task of every worker is submitted before the task queued behind any
    worker's first; every task is submitted once, with its result."""
    from podnuma.fleet.execute import DaskExecutor

    class Recording:
        def __init__(self, client: Any) -> None:
            self.client = client
            self.workers: list[str] = []

        def __getattr__(self, name: str) -> Any:
            return getattr(self.client, name)

        def submit(self, *args: Any, **kw: Any) -> Any:
            self.workers.append(kw["workers"][0])
            return self.client.submit(*args, **kw)

    a, b = sorted(dask_client.scheduler_info()["workers"])
    rec = Recording(dask_client)
    ex = DaskExecutor(rec)  # (not closed: the client is the fixture's)
    where = [(a, 5), (a, 4), (a, 3), (b, 5), (b, 4), (b, 3)]
    got = dict(ex.each(abs, [-1, -2, -3, -4, -5, -6], where=where))
    assert got == {i: i + 1 for i in range(6)}
    assert rec.workers[:4] in ([a, b, a, b], [b, a, b, a]), rec.workers
    # (after those, a worker whose own tasks are done may take another's last)
    assert len(rec.workers) == 6 and set(rec.workers) == {a, b}


def _worker_state() -> tuple[Any, bool]:
    import sys

    import dask

    return dask.config.get("distributed.worker.profile.enabled"), "podnuma.fleet.replay" in sys.modules


def test_the_command_s_local_cluster_has_its_settings_and_preloads() -> None:
    """``--dask local:N``: the workers run without Dask's profiler and have
    the fleet modules imported before their first task; this process's
    Dask settings are left as they were."""
    need("distributed")
    import dask

    from podnuma.fleet.execute import dask_client

    before = dask.config.get("distributed.worker.profile.enabled")
    client, cluster = dask_client("local:2")
    try:
        got = client.run(_worker_state)
    finally:
        client.close()
        cluster.close()
    assert len(got) == 2 and all(v == (False, True) for v in got.values()), got
    assert dask.config.get("distributed.worker.profile.enabled") == before is True


def test_a_cluster_this_process_owns_closes_without_the_scheduler_s_complaints() -> None:
    """What Dask logs while an owned cluster closes (the scheduler's
    traceback for a worker cut off while joining) is not emitted; the
    logger's level is as it was afterwards, and a cluster not owned closes
    with the logger untouched."""
    import logging

    from podnuma.fleet.execute import DaskExecutor

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    class Closes:
        def close(self) -> None:
            logging.getLogger("distributed.scheduler").error("a worker cut off while joining")

    scheduler = logging.getLogger("distributed.scheduler")
    handler = Keep()
    scheduler.addHandler(handler)
    before = logging.getLogger("distributed").level
    try:
        DaskExecutor(Closes(), owned=Closes(), threads=1).close()
        assert records == []
        assert logging.getLogger("distributed").level == before
        DaskExecutor(Closes(), threads=1).close()  # a cluster someone else runs
        assert [r.getMessage() for r in records] == ["a worker cut off while joining"]
    finally:
        scheduler.removeHandler(handler)

"""``--dask local:N`` and ``--dask tcp://...`` as the command runs them:
the Dask client in a forked process of its own (the command never imports
Dask, and runs the first tasks itself while the cluster comes up), the
local cluster's workers forked from it (plain Dask workers, the fleet
modules already imported), a forked worker that dies replaced. Each case
runs in a fresh interpreter: forking is used only where no other thread
runs, which a test process with a cluster fixture is not."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .conftest import need
from .test_dask_commands import _env

SCRIPT = """
import json, os, signal, sys, time
from pathlib import Path
from podnuma.fleet.execute import Serial, open_executor
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.report import fleet_report
from podnuma.fleet.whatif import parse_what_if

FLEET = Path(sys.argv[1])
W = [parse_what_if("pod-level")]


def report(ex):
    fleet = load_fleet([FLEET], map_files=ex.map, parts=ex.parts)
    return fleet_report(fleet, ex.replay(fleet.nodes, W), [w.label for w in W])


def worker_state():
    import dask
    from distributed import versions
    return {"pid": os.getpid(), "parent": os.getppid(),
            "replay": "podnuma.fleet.replay" in sys.modules,
            "profile": dask.config.get("distributed.worker.profile.enabled"),
            "versions": versions._version_cached.cache_info()._asdict()}
"""


def _python(body: str, *args: str) -> Any:
    r = subprocess.run([sys.executable, "-c", SCRIPT + textwrap.dedent(body), *args], env=_env(),
                       capture_output=True, timeout=300, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_local_cluster_from_a_client_process_gives_the_report_of_one_process(small_fleet: Path) -> None:
    need("distributed")
    got = _python("""
        want = report(Serial())
        with open_executor(dask_target="local:2") as ex:
            kind = type(ex).__name__
            got = report(ex)
            workers = ex.run(worker_state)
            for _ in range(600):  # the second worker may still be connecting
                if len(workers) == 2:
                    break
                time.sleep(0.1)
                workers = ex.run(worker_state)
            helper = ex.pid
        print(json.dumps({"same": got == want, "kind": kind, "helper": helper, "me": os.getpid(),
                          "workers": list(workers.values()), "dask here": "distributed" in sys.modules}))
    """, str(small_fleet))
    assert got["same"] and got["kind"] == "DaskProcess"
    assert got["dask here"] is False  # the command itself never imported Dask
    assert len(got["workers"]) == 2
    for w in got["workers"]:
        # forked from the client process (no nanny in between), the modules already there
        assert w["parent"] == got["helper"] != got["me"]
        assert w["replay"] is True and w["profile"] is False
        # the versions a worker reports when it registers were found by the
        # client process before the fork: the worker's lookups all hit
        assert w["versions"]["hits"] >= w["versions"]["currsize"] > 5, w["versions"]


def test_the_command_replays_the_nodes_of_the_dumps_it_read_while_the_cluster_came_up(
    small_fleet: Path,
) -> None:
    """The command reads the first files itself while the Dask client
    process imports Dask: the pods of a dump it reads are kept in the
    command, and the nodes of at most one more runner's share of them are
    replayed there, on a thread beside the cluster's tasks (the rest read
    back by the workers); nothing is kept after, the report is one
    process's."""
    need("distributed")
    got = _python("""
        import threading
        from podnuma.fleet import podscan
        from podnuma.fleet.execute import HERE

        want = report(Serial())
        with open_executor(dask_target="local:2") as ex:
            fleet = load_fleet([FLEET], map_files=ex.map, parts=ex.parts)
            here = sorted(f for f, ps in ex.holders.items() if any(w == HERE for _, w in ps))
            held = sorted(podscan._HELD)
            told = []
            results = ex.replay(fleet.nodes, W, lambda n: told.append((threading.current_thread().name, n)))
            got = fleet_report(fleet, results, [w.label for w in W])
            after = sorted(podscan._HELD)
        print(json.dumps({"same": got == want, "here": here, "held": held, "after": after, "told": told,
                          "pods": {n.name: n.pods_bound for n in fleet.nodes}}))
    """, str(small_fleet))
    dump = str(small_fleet / "pods" / "pods-0000.json")
    assert got["same"]
    # a fleet this small is read before Dask is imported: its one dump here
    assert got["here"] == got["held"] == [dump]
    assert got["after"] == []
    by_thread: dict[str, int] = {}
    for name, n in got["told"]:
        by_thread[name] = by_thread.get(name, 0) + n
    assert set(by_thread) == {"podnuma-fleet-here", "MainThread"}
    assert sum(by_thread.values()) == len(got["pods"]) == 10
    # the command's share: at most a third of the pods (two workers and it)
    # past its last node
    total = sum(max(1, p) for p in got["pods"].values())
    assert 0 < by_thread["podnuma-fleet-here"] < len(got["pods"])
    assert by_thread["podnuma-fleet-here"] <= -(-total // 3) // min(got["pods"].values()) + 1


_FAILING = """
        import threading
        from podnuma.fleet import execute, podscan

        GATE = Path(sys.argv[2])  # made once the replay has returned
        real = execute._replay_args

        def here():
            return threading.current_thread().name == "podnuma-fleet-here"

        def gated():  # the cluster's tasks held until the replay returned
            for _ in range(600):
                if GATE.exists():
                    return
                time.sleep(0.05)
            (GATE.parent / "timed-out").touch()  # (the replay waited for them)

        def state(ex, fleet, replay):
            err = None
            try:
                replay(fleet)
            except RuntimeError as e:
                err = str(e)
            GATE.touch()
            return {"err": err, "alive": [t.name for t in threading.enumerate() if t.name == "podnuma-fleet-here"],
                    "held": sorted(podscan._HELD), "here": sorted(f for f, ps in ex.holders.items() if any(w == "" for _, w in ps))}
"""


def test_the_command_s_own_replay_raising_is_told_without_waiting_for_the_cluster(
    small_fleet: Path, tmp_path: Path,
) -> None:
    """What the command's own partitions raise ends the map at once: the
    cluster's tasks (held back here until the replay returned) are not
    waited for; nothing is kept after, no thread of it left."""
    need("distributed")
    got = _python(_FAILING + """
        def failing(arg):
            if here():
                raise RuntimeError("raised here")
            gated()
            return real(arg)

        execute._replay_args = failing
        with open_executor(dask_target="local:2") as ex:
            fleet = load_fleet([FLEET], map_files=ex.map, parts=ex.parts)
            kept = sorted(f for f, ps in ex.holders.items() if any(w == "" for _, w in ps))
            out = state(ex, fleet, lambda f: ex.replay(f.nodes, W))
        print(json.dumps({**out, "kept": kept}))
    """, str(small_fleet), str(tmp_path / "gate"))
    assert got["kept"] == [str(small_fleet / "pods" / "pods-0000.json")]
    assert got["err"] == "raised here"
    assert not (tmp_path / "timed-out").exists()  # raised while the cluster's tasks were held
    assert got["alive"] == [] and got["held"] == []


def test_a_failed_cluster_map_stops_the_command_s_own_replay_before_it_raises(
    small_fleet: Path, tmp_path: Path,
) -> None:
    """A cluster task that raises ends the map: the command's own replay
    is stopped (before its next partition) and has ended when the error
    is raised, before its kept pods are let go."""
    need("distributed")
    got = _python(_FAILING + """
        ran = []

        def failing(arg):
            if not here():
                raise RuntimeError("raised on a worker")
            ran.append(len(arg[0]))
            time.sleep(0.3)
            return real(arg)

        execute._replay_args = failing
        with open_executor(dask_target="local:2") as ex:
            fleet = load_fleet([FLEET], map_files=ex.map, parts=ex.parts)
            out = state(ex, fleet, lambda f: ex.replay(f.nodes, W))
        print(json.dumps({**out, "ran": ran}))
    """, str(small_fleet), str(tmp_path / "gate"))
    assert got["err"] == "raised on a worker"
    assert got["alive"] == [] and got["held"] == []
    assert len(got["ran"]) >= 1


def test_pods_the_command_kept_are_let_go_when_the_executor_closes_without_a_replay(
    small_fleet: Path,
) -> None:
    need("distributed")
    got = _python("""
        from podnuma.fleet import execute, podscan

        with open_executor(dask_target="local:2") as ex:
            fleet = load_fleet([FLEET], map_files=ex.map, parts=ex.parts)
            during = sorted(podscan._HELD)
        print(json.dumps({"during": during, "after": sorted(podscan._HELD),
                          "run": execute._HERE_RUN[0]}))
    """, str(small_fleet))
    assert got["during"] == [str(small_fleet / "pods" / "pods-0000.json")]
    assert got["after"] == [] and got["run"] is None


@pytest.mark.parametrize("killed", [1, 2], ids=["one", "every"])
def test_forked_workers_killed_mid_run_are_replaced_and_the_report_is_the_same(
    small_fleet: Path, killed: int,
) -> None:
    """One worker killed: the scheduler runs its tasks on the other while a
    spawned one replaces it. Both killed at once: the tasks meant for them
    wait with no worker there, and the scheduler would never give them to
    the spawned workers that join later (their restriction to a gone worker
    checked as if strict); the executor sends them to any worker. Either
    way the run ends with one process's report."""
    need("distributed")
    got = _python("""
        from podnuma.fleet import forked
        from podnuma.fleet.execute import CLUSTER_CONFIG, WORKER_PRELOAD, DaskExecutor

        want = report(Serial())
        fc = forked.start(2, CLUSTER_CONFIG, WORKER_PRELOAD)
        ex = DaskExecutor(fc.client, owned=fc, threads=2)
        try:
            fc.client.wait_for_workers(2, timeout=60)
            before = sorted(fc.client.run(os.getpid).values())
            victims = before[:int(sys.argv[2])]
            fleet = load_fleet([FLEET], map_files=ex.map, parts=ex.parts)
            killed = []

            def progress(_):
                if not killed:
                    for pid in victims:
                        os.kill(pid, signal.SIGKILL)
                    killed.extend(victims)

            got = fleet_report(fleet, ex.replay(fleet.nodes, W, progress), [w.label for w in W])
            fc.client.wait_for_workers(2, timeout=120)
            after = sorted(fc.client.run(os.getpid).values())
            spawned = len(fc.spawned)
        finally:
            ex.close()
        print(json.dumps({"same": got == want, "before": before, "after": after, "killed": killed,
                          "forked": sorted(fc.pids), "spawned": spawned}))
    """, str(small_fleet), str(killed))
    assert got["killed"] == got["before"][:killed] and got["before"] == got["forked"]
    assert got["same"]
    assert got["spawned"] == killed
    assert len(got["after"]) == 2 and not set(got["killed"]) & set(got["after"])


def test_a_forked_worker_ended_by_ctrl_c_is_not_replaced() -> None:
    """Ctrl-C on a terminal reaches the whole process group: a worker it
    ended is not replaced (the command is ending too, and a spawned worker
    still starting would hold up the cluster's close); one that dies
    otherwise is (the test above). The close then ends every worker as it
    tells them to, none left to the kill that ends one that does not stop,
    and removes the scratch space."""
    need("distributed")
    got = _python("""
        from podnuma.fleet import forked
        from podnuma.fleet.execute import CLUSTER_CONFIG, WORKER_PRELOAD

        ended = {}  # how each child ended, as the watcher and the close reap it
        real_waitpid = os.waitpid

        def waitpid(pid, options):
            done, status = real_waitpid(pid, options)
            if done:
                ended[done] = status
            return done, status

        os.waitpid = waitpid
        fc = forked.start(2, CLUSTER_CONFIG, WORKER_PRELOAD)
        try:
            fc.client.wait_for_workers(2, timeout=60)
            os.kill(fc.pids[0], signal.SIGINT)
            for _ in range(600):  # until the scheduler has seen it go
                if len(fc.client.scheduler_info()["workers"]) == 1:
                    break
                time.sleep(0.05)
            time.sleep(1)  # (the watcher looks every 0.2 s)
            seen = len(fc.client.scheduler_info()["workers"])
            spawned = len(fc.spawned)
        finally:
            fc.close()

        def how(status):
            if status is None:
                return "not reaped"
            if os.WIFSIGNALED(status):
                return signal.Signals(os.WTERMSIG(status)).name
            return "exit"

        gone = []
        for pid in fc.pids:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                gone.append(pid)
        print(json.dumps({"workers": seen, "spawned": spawned, "ended": [how(ended.get(p)) for p in fc.pids],
                          "gone": gone == fc.pids, "scratch": os.path.exists(fc.scratch)}))
    """, "-")
    assert got["ended"][0] == "SIGINT" and got["ended"][1] in ("exit", "SIGTERM"), got
    assert {k: v for k, v in got.items() if k != "ended"} == {
        "workers": 1, "spawned": 0, "gone": True, "scratch": False}


def test_a_cluster_of_forked_workers_is_ended_not_emptied_at_the_end_of_a_run(small_fleet: Path) -> None:
    """The workers forked for one command end with it: the pods they kept
    are not let go one call at a time when the replay ends (their memory
    goes with them), and the client process, about to end, ends them
    (``SIGTERM``, each reaped, none replaced) and removes their scratch
    space instead of closing the cluster politely. A cluster that outlives
    the command is still emptied (``tests/fleet/test_dask_follow.py``)."""
    need("distributed")
    got = _python("""
        from podnuma.fleet import forked, podscan
        from podnuma.fleet.execute import CLUSTER_CONFIG, WORKER_PRELOAD, DaskExecutor

        ended = {}
        real_waitpid = os.waitpid

        def waitpid(pid, options):
            done, status = real_waitpid(pid, options)
            if done:
                ended[done] = status
            return done, status

        os.waitpid = waitpid
        fc = forked.start(2, CLUSTER_CONFIG, WORKER_PRELOAD)
        fc.client.wait_for_workers(2, timeout=60)
        ex = DaskExecutor(fc.client, owned=fc, threads=fc.n)
        fleet = load_fleet([FLEET], map_files=ex.map, parts=ex.parts)
        kept = sorted(f for held in fc.client.run(lambda: sorted(podscan._HELD)).values() for f in held)
        ex.release_kept()
        still = sorted(f for held in fc.client.run(lambda: sorted(podscan._HELD)).values() for f in held)
        ex.close_at_exit()
        gone = []
        for pid in fc.pids:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                gone.append(pid)
        print(json.dumps({"kept": kept, "still": still, "gone": gone == fc.pids, "spawned": len(fc.spawned),
                          "ended": [os.WTERMSIG(ended[p]) if p in ended and os.WIFSIGNALED(ended[p]) else None
                                    for p in fc.pids],
                          "scratch": os.path.exists(fc.scratch)}))
    """, str(small_fleet))
    assert got["kept"] and got["still"] == got["kept"], got
    assert got["gone"] and got["spawned"] == 0 and got["scratch"] is False, got
    assert got["ended"] == [15, 15], got


def test_a_cluster_that_cannot_be_reached_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """The client process cannot connect: the command says so, naming the
    target, and leaves no process behind."""
    need("distributed")
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**_env(), "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    r = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze",
                        str(Path(__file__).parents[2] / "examples" / "fleet"), "-o", "json",
                        "--dask", f"tcp://127.0.0.1:{port}"], env=env, capture_output=True,
                       timeout=120, text=True)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --dask tcp://127.0.0.1:{port}: "), r.stderr


def test_a_local_cluster_leaves_nothing_in_the_temporary_directory(small_fleet: Path, tmp_path: Path) -> None:
    """``--dask local:2``: the workers' scratch space is the cluster's own
    directory, removed when it closes; the temporary directory is as it was
    (no ``dask-scratch-space``, no lock files), run after run."""
    need("distributed")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(_env(), TMPDIR=str(scratch))
    for _ in range(2):
        r = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(small_fleet),
                            "-o", "json", "--dask", "local:2"], env=env, capture_output=True,
                           timeout=300, text=True)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["kind"] == "FleetReport"
        assert list(scratch.iterdir()) == []


def test_a_command_that_ignores_ctrl_c_keeps_its_workers_through_one(tmp_path: Path) -> None:
    """A script that starts the command in the background (a non-interactive
    shell sets ``SIGINT`` to ignored for it) and then gets a Ctrl-C: the
    interrupt reaches the whole process group. The command ignores it, and
    so do the workers forked for it (they used to die of it, not replaced,
    and the command waited for ever): the run ends with its report, nothing
    left behind."""
    need("distributed")
    import os
    import signal
    import time

    from podnuma.fleet.generate import generate_fleet

    fleet = tmp_path / "fleet"
    generate_fleet(fleet, nodes=400, pods_per_node=60, seed=3)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    want = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json"],
                          env=_env(), capture_output=True, timeout=300, check=True).stdout

    def ignore_sigint() -> None:
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json",
                             "--dask", "local:2", "--what-if", "restart"],
                            env=dict(_env(), TMPDIR=str(scratch)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=ignore_sigint)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:  # until the workers are there
            if any(scratch.iterdir()) and len(_group(proc.pid)) >= 4:
                break
            time.sleep(0.01)
        time.sleep(0.3)  # (and past their first steps: each sets its own way with SIGINT)
        running = proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: to the whole group
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert running, "the run ended before the interrupt: make the fleet larger"
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["kind"] == "FleetReport" and report["fleet"] == json.loads(want)["fleet"]
    assert list(scratch.iterdir()) == []
    assert _group(proc.pid) == []


def _group(pgid: int) -> list[int]:
    """The processes of process group ``pgid`` still there."""
    import os

    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(entry))
    return out

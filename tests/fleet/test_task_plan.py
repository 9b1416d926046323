"""How the work is cut and handed out: partitions largest first and shrinking
to the end for runners that take the next one when free, scan batches
weighed by their files' bytes and their number, and the tasks the command
has not begun sent to the cluster the moment it is up."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from podnuma.fleet.batches import FILE_COST_BYTES, guided_batches
from podnuma.fleet.execute import MAX_TASK_PODS, partition
from podnuma.fleet.inputs import file_batches, load_fleet

from .test_dask_commands import _env


def test_guided_batches_shrink_to_the_end_and_keep_the_order() -> None:
    items = list(range(1000))
    got = guided_batches(items, [10] * 1000, runners=2, largest=1000, smallest=40)
    assert [x for b in got for x in b] == items
    sizes = [10 * len(b) for b in got]
    assert sizes[0] == 1000  # what is left / (2 x 2 runners), capped
    assert sizes == sorted(sizes, reverse=True)
    assert all(s >= 40 for s in sizes[:-1]) and sizes[-2] < 200  # a small tail
    # every batch but the last weighs at least what the rule asks
    left = 10_000
    for s in sizes[:-1]:
        assert s >= max(40, min(1000, -(-left // 4)))
        left -= s


def test_partitions_for_runners_are_largest_first_and_give_the_same_report(small_fleet: Path) -> None:
    from podnuma.fleet.replay import replay_partition
    from podnuma.fleet.report import fleet_report

    fleet = load_fleet([small_fleet])
    even = partition(fleet.nodes, parts_hint=3)
    guided = partition(fleet.nodes, parts_hint=3, runners=2)
    weights = [sum(n.pods_bound or 1 for n in p) for p in guided]
    assert len(guided) > len(even) and weights[0] > weights[-1]
    assert weights[0] <= MAX_TASK_PODS
    assert [n.name for p in guided for n in p] == [n.name for p in even for n in p]

    def report(parts: list[list[object]]) -> dict[str, object]:
        nodes = sorted((r for p in parts for r in replay_partition(p)), key=lambda r: r["name"])  # type: ignore[arg-type]
        return fleet_report(fleet, nodes, [])

    assert report(guided) == report(even)  # type: ignore[arg-type]


def test_scan_batches_count_each_file_not_only_its_bytes(tmp_path: Path) -> None:
    small = [tmp_path / f"configz-{i:03}.json" for i in range(200)]
    for f in small:
        f.write_text("{}")
    big = tmp_path / "pods.json"
    big.write_bytes(b" " * (199 * FILE_COST_BYTES))
    batches = file_batches([*small, big], parts=2)
    # by bytes alone the 200 small files would ride with the big dump's batch
    assert len(batches) == 2
    assert batches[0] == [str(f) for f in small] and batches[1] == [str(big)]


#: a cluster in the client process that runs each task there, one at a time
CLUSTER = """
class Cluster:
    client = None

    def each(self, fn, args, name=None):
        for i in range(len(args)):
            yield i, fn(args[i])

    def close(self):
        pass"""

HANDOVER = """
import json, os, sys, time
from podnuma.fleet import daskproc

MAIN = os.getpid()
BEGUN = sys.argv[1]  # made by the cluster's first task
""" + CLUSTER + """

def connect():
    time.sleep(0.5)  # the cluster comes up while the command runs its first task
    return Cluster(), 2


def task(i):
    start = time.time()
    if os.getpid() == MAIN:
        # the command's task ends once the cluster has begun one (at most 60 s)
        deadline = time.monotonic() + 60
        while not os.path.exists(BEGUN) and time.monotonic() < deadline:
            time.sleep(0.01)
    else:
        open(BEGUN, "w").close()
    return [i, os.getpid() == MAIN, start, time.time()]


proc = daskproc.start("test", connect, threads=2, parts_per_thread=8)
told = []
done = []
out = proc.map(task, list(range(6)), done.append,
               arrived=lambda i, r: told.append([i, r[0], i in done]))
proc.close()
print(json.dumps([out, told, done]))
"""


def test_the_tasks_not_begun_go_to_the_cluster_while_the_command_s_task_runs(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(HANDOVER), str(tmp_path / "begun")],
                       env=_env(), capture_output=True, timeout=120, text=True)
    assert r.returncode == 0, r.stderr
    out, told, done = json.loads(r.stdout.strip().splitlines()[-1])
    assert [row[0] for row in out] == list(range(6))  # in the order of the arguments
    # each result told as it came (the command's own and the cluster's), before its index was done
    assert sorted(told) == [[i, i, False] for i in range(6)]
    assert sorted(done) == list(range(6))
    here = [row for row in out if row[1]]
    there = [row for row in out if not row[1]]
    assert [row[0] for row in here] == [0]
    # the cluster began the others before the command's own task ended (a
    # command that handed them over only then would wait its 60 s first)
    assert min(row[2] for row in there) < here[0][3] < here[0][2] + 50


TEARDOWN = """
import os, sys, time
from podnuma.fleet import daskproc

stage = sys.argv[1]
""" + CLUSTER + """

class Closing(Cluster):
    def close(self):
        sys.stderr.write("noise from a cluster closing\\n")
        sys.stderr.flush()


def connect():
    sys.stderr.write("said while coming up\\n")
    sys.stderr.flush()
    open(sys.argv[2], "w").close()  # (the command stops it from now on)
    if stage == "coming-up":
        try:
            time.sleep(60)
        finally:  # the command stopped it mid-way
            sys.stderr.write("noise from a cluster stopped mid-way\\n")
            sys.stderr.flush()
    return Closing(), 2


proc = daskproc.start("test", connect, threads=2, parts_per_thread=8)
if stage == "coming-up":  # stopped once it has said so, while it comes up
    deadline = time.monotonic() + 60
    while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
        time.sleep(0.01)
else:
    assert proc.map(abs, [-1, -2]) == [1, 2]
proc.close()
print("closed")
"""


@pytest.mark.parametrize("stage", ["coming-up", "ready"])
def test_a_cluster_torn_down_says_nothing_on_the_command_s_stderr(stage: str, tmp_path: Path) -> None:
    """What the client process writes while its cluster is torn down
    (stopped while coming up, or closed after the run) does not reach the
    command's stderr; what it wrote before does."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(TEARDOWN), stage, str(tmp_path / "said")],
                       env=_env(), capture_output=True, timeout=120, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "closed\n"
    assert r.stderr == "said while coming up\n"


class _Pipe:
    def __init__(self) -> None:
        self.sent: list[tuple[str, list[int]]] = []

    def send(self, msg: tuple[object, ...]) -> None:
        import pickle

        blobs = msg[2] if msg[0] == "map" else msg[1]
        self.sent.append((str(msg[0]), [pickle.loads(b) for b in blobs]))  # type: ignore[union-attr]


def test_each_argument_goes_to_the_client_process_in_a_message_of_its_own() -> None:
    """The first argument goes with the map, each other in a message of its
    own (sent by a thread as soon as it is pickled), in order."""
    from podnuma.fleet.daskproc import ClientProcess

    proc = object.__new__(ClientProcess)
    proc._sender = None
    pipe = proc.conn = _Pipe()
    proc._send(abs, list(range(5)), 0)
    assert proc._sender is not None
    proc._sender.join(10)
    assert pipe.sent == [("map", [0]), ("more", [1]), ("more", [2]), ("more", [3]), ("more", [4])]
    pipe.sent.clear()
    proc._send(abs, list(range(5)), 3)  # the first three ran in the command
    proc._sender.join(10)
    assert pipe.sent == [("map", [3]), ("more", [4])]


BIG = """
import sys
from podnuma.fleet import daskproc
""" + CLUSTER + """

SIZE = 400_000  # an argument and a result: more than a pipe holds, together


def task(arg):
    return b"r" * SIZE


proc = daskproc.start("test", lambda: (Cluster(), 2), threads=2, parts_per_thread=8)
proc.map(len, [b""])  # the cluster up
out = proc.map(task, [b"a" * SIZE for _ in range(40)])
proc.close()
print(len(out), sum(len(r) for r in out) == 40 * SIZE)
"""


def test_large_arguments_and_results_do_not_hold_the_pipe_still() -> None:
    """A map whose arguments and results each fill more than the pipe holds:
    the client process reads an argument when it starts its task and sends
    each result as it comes, and the command reads the results while it is
    still sending arguments (neither process waits on the other for good)."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(BIG)], env=_env(),
                       capture_output=True, timeout=120, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["40", "True"]


GIVEN_UP = """
import json, os, time
from podnuma.fleet import daskproc
""" + CLUSTER + """

real_waitpid = os.waitpid
reaped = []


def waitpid(pid, options):
    got = real_waitpid(pid, options)
    reaped.append(got)  # (the processes close reaps)
    return got


os.waitpid = waitpid


def connect():
    time.sleep(0.3)  # the command runs its first tasks meanwhile
    return Cluster(), 2


MAIN = os.getpid()


def task(i):
    if os.getpid() != MAIN and i != 1:
        time.sleep(600)  # (a task of the cluster's that only stopping its process ends)
    time.sleep(0.2)
    return i


def told(i, result):
    if i == 1:
        raise ValueError("told")


proc = daskproc.start("test", connect, threads=2, parts_per_thread=8)
got = []
try:
    proc.map(task, list(range(6)), arrived=told)
except ValueError as e:
    got.append(str(e))
try:
    proc.map(task, [1])
except RuntimeError as e:
    got.append("no other map")
proc.close()
# the client process ended and was reaped, stopped in a task of 600 s
got.append([pid for pid, _ in reaped] == [proc.pid])
print(json.dumps(got))
"""


def test_a_map_given_up_half_way_leaves_the_client_process_to_be_stopped() -> None:
    """A map that raises (here: what is told a result raises, while the
    cluster comes up and the command runs tasks itself) leaves no other map
    to run on that process, and closing it stops it at once: the client
    process, in a task of the cluster's that runs 600 s, has ended and been
    reaped when ``close`` returns (the run's timeout, far below those 600 s,
    is the hang guard that fails a close that waits for the task)."""
    import os
    import signal

    run = subprocess.Popen([sys.executable, "-c", textwrap.dedent(GIVEN_UP)], env=_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = run.communicate(timeout=120)
    finally:  # (the client process too, when close left it running)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
    assert run.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1]) == ["told", "no other map", True]


def test_the_sending_thread_ends_quietly_when_its_connection_is_closed_under_it() -> None:
    """The command closes the connection (Ctrl-C, an error) while the
    sending thread writes: a connection closed mid-write raises
    ``TypeError``, not only ``OSError``; the thread ends without a
    traceback on standard error either way (the reading side says what
    went wrong)."""
    from queue import SimpleQueue

    from podnuma.fleet.daskproc import ClientProcess

    for error in (TypeError("'NoneType' object cannot be interpreted as an integer"),
                  OSError("handle is closed")):
        class Closed:
            tried = 0
            raises = error

            def send(self, msg: object) -> None:
                Closed.tried += 1
                raise self.raises

        proc = object.__new__(ClientProcess)
        proc.conn = Closed()
        queue: SimpleQueue[bytes | None] = SimpleQueue()
        for blob in (b"a", b"b", None):
            queue.put(blob)
        proc._send_each(queue)  # returns at the first failed send, raising nothing
        assert Closed.tried == 1


def test_scan_batches_of_pieces_shrink_to_one_piece(tmp_path: Path) -> None:
    """Large dumps read in pieces by two runners: the batches shrink down
    to a single piece at the end (the runners then end within a piece's
    reading of each other), the pieces in order, each once."""
    from podnuma.fleet.podscan import PIECE_BYTES, Piece

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
           "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "x" * 900}]}}
    dumps = []
    for d in range(3):
        items = [{**pod, "metadata": {**pod["metadata"], "name": f"p{d}-{i}", "uid": f"u{d}-{i}"}}
                 for i in range(int(2.6 * PIECE_BYTES) // 1000)]
        f = tmp_path / f"pods-{d}.json"
        f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4))
        dumps.append(f)
    batches = file_batches(dumps, parts=4, runners=2)
    pieces = [p for b in batches for p in b]
    assert all(isinstance(p, Piece) for p in pieces)
    assert [(p.path, p.index) for p in pieces] == sorted({(p.path, p.index) for p in pieces})
    assert all(p.hi - p.lo < PIECE_BYTES for p in pieces)  # (each dump cut evenly: a piece is less)
    assert len(batches[0]) > 1 and len(batches[-1]) == len(batches[-2]) == 1

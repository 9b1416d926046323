"""Fleet analysis throughput: ``podnuma fleet analyze`` as a user runs it,
in one process and on a 2-worker Dask LocalCluster.

Generates a synthetic fleet (``podnuma fleet generate``: N nodes x M pods,
the dumps a real cluster gives) unless ``--dir`` holds one, then runs
``podnuma fleet analyze DIR -o json --output-file ...`` in a child process:

1. one process (no executor option);
2. ``--dask local:W``: a Dask ``LocalCluster`` of W worker processes (one
   thread each), started by the command: the workers read and index the
   dumps and replay the nodes, the command only assembles and reports.

For each: the wall time of the whole command (start-up, reading, replay,
report; the cluster's start included), the CPU seconds of the command and
all its processes, pods per second of wall and of CPU, and the peak of the
summed resident memory of the command's process tree (sampled every 0.1 s
with psutil: the client, the scheduler, the nannies and the workers). Then
the ratio of the one-process wall time to the Dask wall time, the highest
ratio the Dask run's CPU allows (its CPU seconds, a running cluster's
included, spread over every core with none ever waiting: the least wall
time it could take), and whether the two reports are byte-identical. A benchmark, not a test: it asserts
nothing about time. On a busy machine the wall figures are what the
machine gave; the CPU figures say what the work costs. The issue's full
size is ``--nodes 10000 --pods-per-node 100``.

``--breakdown`` adds, for each mode, the same steps run in this process
(as the command runs them) with where the time goes: per step (cluster
start, reading and indexing the dumps, replay, the report, its JSON
encoding) the wall seconds, the CPU seconds of this process (the client:
planning, assembling, the reduction, the encoding; with a LocalCluster the
scheduler and the nannies too, on their own thread, given apart) and of the
workers; the number of tasks, the pods per partition, the bytes of the
results the workers send back; and per process (client, each worker) its
CPU seconds and peak RSS (sampled every 0.1 s).

With ``--breakdown`` also a timeline of the tasks (:mod:`fleet_timeline`):
per process (the command, each worker) when its first task began after the
executor was asked for, its tasks' wall and CPU seconds, the gaps between
its tasks and its idle time after its last one (the tail); then each task
(``fN``: a batch of N files read, ``pN``: N pods replayed; the first 40) as
``pN@START+WALL/CPU``, and the replay's CPU per pod (its first task apart:
it fills the process's caches); last, the replay's CPU per pod over every
process.

``--variant LABEL=PYTHON[:SRC]`` (repeatable) runs the commands with
another interpreter (another install) and, given ``SRC``, with
``PYTHONPATH=SRC``; ``--rounds N`` runs every mode of every variant N
times, the variants alternating in each round: before and after in one
invocation, with each variant's ratios per round and their median (a
running cluster is started per variant, from its interpreter).

    python bench/bench_fleet.py [--nodes N] [--pods-per-node M] [--workers W]
                                [--what-if pod-level] [--dir DIR] [--skip-serial] [--skip-dask]
                                [--running-cluster] [--breakdown]
                                [--variant LABEL=PYTHON[:SRC] ...] [--rounds N]
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import fleet_timeline  # noqa: E402


def _run(cmd: list[str], src: str | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (the process and its descendants) and the
    peak of the summed RSS of its process tree (bytes). ``src``: the
    ``PYTHONPATH`` to run it with (else none)."""
    import psutil  # type: ignore[import-untyped]

    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # bytecode caching on, as an installed or checked-out podnuma has it
    env = _env(src)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    top = psutil.Process(proc.pid)
    peak = [0]
    ended = threading.Event()

    def sample() -> None:  # the tree's RSS every 0.1 s, on a thread of its own
        while not ended.is_set():
            total = 0
            try:
                procs = [top, *top.children(recursive=True)]
            except psutil.Error:
                procs = []
            for p in procs:
                with contextlib.suppress(psutil.Error):
                    total += p.memory_info().rss
            peak[0] = max(peak[0], total)
            ended.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # the wall time to the command's exit (not to the next sample: the
    # sampling period would round a 1.5 s run to a tenth of a second)
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.wait()
    wall = time.perf_counter() - t
    ended.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err}")
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    return wall, cpu, peak[0]


def _env(src: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    if src:
        env["PYTHONPATH"] = src
    elif "PYTHONPATH" in os.environ and not _VARIANTS:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


#: whether ``--variant`` was given (each then runs with its own PYTHONPATH only)
_VARIANTS: list[tuple[str, str, str | None]] = []


def _rusage_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Sampler:
    """Per process of this process's tree: the last CPU seconds seen and
    the peak RSS (bytes), sampled on a thread."""

    def __init__(self) -> None:
        import threading

        import psutil

        self.top = psutil.Process()
        self.cpu: dict[int, float] = {}
        self.rss: dict[int, int] = {}
        self.cmd: dict[int, str] = {}
        self.cpu0: dict[int, float] = {}  # the CPU of the processes already there
        for p in [self.top, *self.top.children(recursive=True)]:
            t = p.cpu_times()
            self.cpu0[p.pid] = t.user + t.system
        self.own = 0.0  # this sampler's CPU seconds (not the run's)
        self.helper = -1  # the pid of the command's Dask client process
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        """Sampling from now on (a thread: after the executor started,
        as ``--dask local:N`` forks its workers only while this process
        runs no other thread)."""
        self.thread.start()

    def _run(self) -> None:
        import psutil

        n = 0
        while not self.stop.is_set():
            n += 1
            try:
                procs = [self.top, *self.top.children(recursive=True)]
            except psutil.Error:
                procs = [self.top]
            for p in procs:
                try:
                    with p.oneshot():
                        t = p.cpu_times()
                        rss = p.memory_info().rss
                        if p.pid not in self.cmd or n % 20 == 0:  # a spawned process execs
                            self.cmd[p.pid] = " ".join(p.cmdline())
                except psutil.Error:
                    continue
                self.cpu[p.pid] = t.user + t.system
                self.rss[p.pid] = max(self.rss.get(p.pid, 0), rss)
            self.own = time.thread_time()
            self.stop.wait(0.1)

    def finish(self) -> list[tuple[str, int, float, int]]:
        self.stop.set()
        self.thread.join()
        out = []
        for pid in sorted(self.cpu):
            cmd = self.cmd.get(pid, "")
            role = ("client" if pid == self.top.pid else
                    "Dask client process" if pid == self.helper else
                    "worker" if "spawn_main" in cmd or "dask worker" in cmd else
                    "worker (forked)" if cmd == self.cmd.get(self.top.pid) else
                    "scheduler" if "dask scheduler" in cmd else
                    "resource tracker" if "resource_tracker" in cmd else cmd[:40])
            cpu = self.cpu[pid] - self.cpu0.get(pid, 0.0) - (self.own if pid == self.top.pid else 0.0)
            out.append((role, pid, cpu, self.rss[pid]))
        return out


#: where the tasks' timeline is written (:mod:`fleet_timeline`)
_TIMELINE = Path(tempfile.mkdtemp(prefix="bench-fleet-timeline-"))
os.environ[fleet_timeline.ENV] = str(_TIMELINE)
atexit.register(shutil.rmtree, _TIMELINE, ignore_errors=True)  # (every run made one and left it)

#: the CPU seconds of a running cluster's workers when it was started, by address
_STARTED_CPU: dict[str, float] = {}


def _worker_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def breakdown(d: Path, what_ifs: list[str], target: str | None, pods: int | None) -> bytes:
    """One mode's steps in this process, with where the time goes (printed);
    the report's JSON."""
    import pickle
    import statistics

    from podnuma.fleet import execute
    from podnuma.fleet.report import fleet_report
    from podnuma.render.output import render_output
    from podnuma.service import fleet as service

    sampler = _Sampler()
    rows: list[tuple[str, float, float, float, float]] = []
    client: Any = None
    helper: list[Any] = []  # the command's Dask client process, when it runs in one of its own

    def client_cpu() -> float:
        own = _rusage_cpu() - sampler.own
        for p in helper:
            with contextlib.suppress(Exception):
                t = p.cpu_times()
                own += t.user + t.system
        return own

    state = {"t": time.perf_counter(), "c": client_cpu(), "m": time.thread_time(), "w": 0.0}

    def workers_cpu() -> float:
        if client is None:
            return 0.0
        if not getattr(ex, "ready", True):  # the cluster still coming up: asking would wait for it
            return state["w"]
        return float(sum(client.run(_worker_cpu).values()))

    def step(name: str) -> None:
        t, c, m, w = time.perf_counter(), client_cpu(), time.thread_time(), workers_cpu()
        rows.append((name, t - state["t"], c - state["c"], m - state["m"], w - state["w"]))
        state.update(t=time.perf_counter(), c=client_cpu(), m=time.thread_time(), w=workers_cpu())

    parsed = service.what_ifs(what_ifs, workers=None, dask_target=target)
    sizes: list[int] = []
    result_bytes = 0
    for old in _TIMELINE.glob("*.jsonl"):
        old.unlink()
    fleet_timeline.install(_TIMELINE)
    started = time.time()

    with service.executor(dask_target=target) as ex:
        sampler.start()
        client = getattr(ex, "client", None)
        if getattr(ex, "pid", None) is not None:
            import psutil

            helper.append(psutil.Process(ex.pid))
            sampler.helper = ex.pid
        if target is not None and not target.startswith("local"):
            state["w"] = _STARTED_CPU.get(target, 0.0)  # a running cluster: its start-up is not this run's
        step("start")
        fleet = service.load([d], executor=ex)
        step("read+index")

        # (an executor whose replay follows the pods maps through ``_map``)
        hook = "_map" if hasattr(ex, "_map") else "map"
        orig = getattr(ex, hook)

        def counting(fn: Any, args: Any, done: Any = None, *more: Any, **named: Any) -> Any:
            nonlocal result_bytes
            out = orig(fn, args, done, *more, **named)
            if fn is execute._replay_args:
                sizes.extend(sum(execute._weight(n) for n in a[0]) for a in args)
                t, c, m = time.perf_counter(), client_cpu(), time.thread_time()
                result_bytes += sum(len(pickle.dumps(r, protocol=5)) for r in out)
                # not the run's time
                state["t"] += time.perf_counter() - t
                state["c"] += client_cpu() - c
                state["m"] += time.thread_time() - m
            return out

        setattr(ex, hook, counting)
        results = execute.run_fleet(fleet.nodes, parsed, executor=ex)
        step("replay")
        report = fleet_report(fleet, results, [w.label for w in parsed])
        service._gate_changes(report, parsed)
        step("report")
        text = render_output("json", lambda: report, {})
        step("encode")
        ended = time.time()
    procs = sampler.finish()
    total = sum(r[1] for r in rows)
    if pods is None:  # a fleet made before: its report counts it
        pods = int(json.loads(text)["summary"]["as running"]["pods"])
    print(f"  breakdown ({target or 'one process'}): {total:.1f} s wall, {pods / total:.0f} pods/s")
    print(f"    {'step':12} {'wall s':>7} {'client CPU s':>12} {'(main thread)':>13} {'workers CPU s':>13}")
    for name, w, c, m, wc in rows:
        print(f"    {name:12} {w:7.2f} {c:12.2f} {m:13.2f} {wc:13.2f}")
    print(f"    {'total':12} {total:7.2f} {sum(r[2] for r in rows):12.2f} {sum(r[3] for r in rows):13.2f} "
          f"{sum(r[4] for r in rows):13.2f}")
    cores = os.cpu_count() or 1
    bound = sum(max(c, (c + wc) / cores) for _, _, c, _, wc in rows)
    print(f"    CPU-bound wall on an otherwise idle {cores}-core machine (per step, the larger of the "
          f"client's CPU and all CPU / {cores}): {bound:.1f} s, {pods / bound:.0f} pods/s")
    if sizes:
        print(f"    replay: {len(sizes)} tasks, pods per partition min/median/max {min(sizes)}/"
              f"{statistics.median(sizes):.0f}/{max(sizes)}; results {result_bytes / 2**20:.1f} MiB "
              f"pickled; report {len(text.encode()) / 2**20:.1f} MiB of JSON")
    peak_sum = sum(p[3] for p in procs)
    for role, pid, cpu, rss in procs:
        print(f"    process {role:16} {pid:>7}: {cpu:7.2f} CPU s, peak RSS {rss / 2**20:6.0f} MiB")
    print(f"    sum of the processes' peaks {peak_sum / 2**20:.0f} MiB")
    fleet_timeline.report(_TIMELINE, started, ended, {pid: role for role, pid, _, _ in procs})
    return text.encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods-per-node", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--what-if", action="append", default=[])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=None, help="reuse (or keep) the generated fleet here")
    ap.add_argument("--skip-serial", action="store_true")
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--breakdown", action="store_true",
                    help="run each mode's steps in this process and print where the time goes")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=PYTHON[:SRC]",
                    help="run with this interpreter (and PYTHONPATH=SRC), alternating with the "
                         "other variants in each round (before and after in one invocation)")
    ap.add_argument("--rounds", type=int, default=1, help="run every mode of every variant this many times")
    ap.add_argument("--running-cluster", action="store_true",
                    help="also run on a scheduler and workers started beforehand (dask scheduler, "
                         "dask worker): the cluster's start-up is not in the figures")
    args = ap.parse_args()

    from podnuma.fleet.generate import generate_fleet

    tmp = tempfile.TemporaryDirectory(prefix="bench-fleet-")
    d = args.dir or Path(tmp.name) / "fleet"
    generated = not (d / "nodes.json").exists()
    if generated:
        t = time.perf_counter()
        g = generate_fleet(d, nodes=args.nodes, pods_per_node=args.pods_per_node, seed=args.seed)
        print(f"generated {g.nodes} nodes, {g.pods} pods, {g.files} files in {time.perf_counter() - t:.1f} s")
    size = sum(p.stat().st_size for p in d.rglob("*") if p.is_file())
    # a fleet made before (``--dir``) is counted by its first report
    pods: int | None = args.nodes * args.pods_per_node if generated else None
    try:
        from podnuma import engine_build
    except ImportError:  # trees before the optional compiled build
        build = "pure Python"
    else:
        build = engine_build()
    print(f"engine: {build}")
    counted = f"{args.nodes} nodes x {args.pods_per_node} pods = {pods} pods" if pods else str(d)
    print(f"fleet: {counted}, {size / 2**20:.0f} MiB "
          f"of dumps; what-ifs: {args.what_if or 'none'}; {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")

    variants: list[tuple[str, str, str | None]] = []
    for v in args.variant:
        label, _, rest = v.partition("=")
        python, _, src = rest.partition(":")
        variants.append((label, python or sys.executable, src or None))
    _VARIANTS.extend(variants)
    if not variants:
        variants = [("this", sys.executable, None)]
    if args.breakdown and len(variants) > 1:
        raise SystemExit("--breakdown runs this interpreter's code: no --variant")
    modes: list[tuple[str, str | None]] = []
    if not args.skip_serial:
        modes.append(("one process", None))
    if not args.skip_dask:
        modes.append((f"dask local:{args.workers}", f"local:{args.workers}"))
    cluster: list[subprocess.Popen[bytes]] = []
    if args.running_cluster:
        modes.append((f"dask tcp, {args.workers} running workers", "tcp"))
    if args.breakdown:
        try:
            for name, target in modes:
                if target == "tcp":
                    target = _start_cluster(cluster, args.workers, Path(tmp.name))
                print(f"{name}:")
                breakdown(d, args.what_if, target, pods)
        finally:
            _stop_cluster(cluster)
        return
    # walls[variant][mode] over the rounds; the first report of all, to compare with
    walls: dict[str, dict[str, list[float]]] = {v[0]: {m[0]: [] for m in modes} for v in variants}
    # the CPU seconds of each run: the command's process tree and, on a
    # running cluster, its scheduler's and workers' for the run
    cpus: dict[str, dict[str, list[float]]] = {v[0]: {m[0]: [] for m in modes} for v in variants}
    first: bytes | None = None
    identical = True
    addresses: dict[str, str] = {}
    theirs_procs: dict[str, list[subprocess.Popen[bytes]]] = {}
    try:
        for r in range(args.rounds):
            for label, python, src in variants:
                base = [python, "-m", "podnuma.cli", "fleet", "analyze", str(d), "-o", "json"]
                for w in args.what_if:
                    base += ["--what-if", w]
                for name, target in modes:
                    if target == "tcp":  # started when first needed, one cluster per variant
                        if label not in addresses:
                            n = len(cluster)
                            addresses[label] = _start_cluster(cluster, args.workers, Path(tmp.name),
                                                              python, src, label)
                            theirs_procs[label] = cluster[n:]
                        target = addresses[label]
                    extra = ["--dask", target] if target else []
                    out = Path(tmp.name) / "report.json"
                    before = _cluster_cpu(theirs_procs.get(label, []))
                    wall, cpu, peak = _run([*base, *extra, "--output-file", str(out)], src)
                    # a running cluster's scheduler and workers: their CPU for this run
                    ran = {pid: c - before.get(pid, 0.0) for pid, c in _cluster_cpu(theirs_procs.get(label, [])).items()}
                    theirs = sum(ran.values()) if target and not target.startswith("local") else 0.0
                    walls[label][name].append(wall)
                    cpus[label][name].append(cpu + theirs)
                    doc = out.read_bytes()
                    if pods is None:
                        summary = json.loads(doc)["summary"]["as running"]
                        pods = int(summary["pods"])
                        print(f"fleet: {summary['nodes']} nodes, {pods} pods (its first report)")
                    if first is None:
                        first = doc
                    same = doc == first
                    identical &= same
                    print(f"{f'[{r + 1}] {label}':12} {name:16} {wall:7.2f} s wall {pods / wall:8.0f} pods/s | "
                          f"{cpu:7.1f} CPU s {pods / cpu:8.0f} pods/CPU-s"
                          f"{f' (+ cluster {theirs:.1f})' if theirs else ''} | peak RSS (sum) "
                          f"{peak / 2**20:6.0f} MiB | load {os.getloadavg()[0]:.1f}"
                          f"{'' if same else ' | REPORT DIFFERS'}")
    finally:
        _stop_cluster(cluster)
    for label, _, _ in variants:
        names = list(walls[label])
        if names and names[0] == "one process":
            for other in names[1:]:
                ratios = [a / b for a, b in zip(walls[label][names[0]], walls[label][other], strict=True)]
                print(f"{label}: ratio one process wall / {other} wall, per round: "
                      f"{' '.join(f'{x:.2f}' for x in ratios)}; median {statistics.median(ratios):.2f}")
                # the most the run's CPU allows: its CPU spread over every core
                # with no core ever waiting is the least wall time it can take
                cores = os.cpu_count() or 1
                bounds = [a / (c / cores) for a, c in zip(walls[label][names[0]], cpus[label][other],
                                                          strict=True)]
                print(f"{label}: the highest ratio the CPU of {other} allows on {cores} cores (one process "
                      f"wall / (its CPU s / {cores})), per round: {' '.join(f'{x:.2f}' for x in bounds)}; "
                      f"median {statistics.median(bounds):.2f}")
    print(f"byte-identical reports (every run, every mode and variant): {identical}")


def _start_cluster(procs: list[subprocess.Popen[bytes]], workers: int, tmp: Path,
                   python: str | None = None, src: str | None = None, label: str = "") -> str:
    """A scheduler and ``workers`` single-threaded workers started with
    Dask's own commands on loopback (the workers import the fleet modules
    as they start); the scheduler's address once they are all up."""
    from distributed import Client

    from podnuma.fleet import execute

    dask = str(Path(python or sys.executable).parent / "dask")
    # the settings the command gives the LocalCluster it starts
    env = _env(src)
    env["DASK_TEMPORARY_DIRECTORY"] = str(tmp)  # (not a dask-scratch-space left in the shared one)
    for key, value in getattr(execute, "CLUSTER_CONFIG", {}).items():
        env["DASK_" + key.upper().replace(".", "__").replace("-", "_")] = str(value)
    sched_file = tmp / f"scheduler{label}.json"
    log = (tmp / "dask.log").open("wb")
    procs.append(subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", str(sched_file)],
                                  stdout=log, stderr=subprocess.STDOUT, env=env))
    preload = [a for m in getattr(execute, "WORKER_PRELOAD", ()) for a in ("--preload", m)]
    preload += ["--preload", str(Path(__file__).parent / "fleet_timeline.py")]
    for _ in range(workers):
        procs.append(subprocess.Popen([dask, "worker", "--scheduler-file", str(sched_file), "--nthreads", "1",
                                       "--host", "127.0.0.1", "--no-dashboard", "--no-nanny", *preload],
                                      stdout=log, stderr=subprocess.STDOUT, env=env))
    deadline = time.monotonic() + 120
    while not sched_file.exists():
        if time.monotonic() > deadline:
            raise SystemExit("the scheduler did not start")
        time.sleep(0.1)
    with Client(scheduler_file=str(sched_file), timeout=60) as client:  # type: ignore[no-untyped-call]
        client.wait_for_workers(workers, timeout=120)
        address = str(client.scheduler.address)
        # the workers' CPU so far (their start-up) is not the runs'
        _STARTED_CPU[address] = float(sum(client.run(_worker_cpu).values()))
        return address


def _cluster_cpu(procs: list[subprocess.Popen[bytes]]) -> dict[int, float]:
    """The CPU seconds so far of each process of the running clusters."""
    import psutil

    out = {}
    for p in procs:
        with contextlib.suppress(psutil.Error):
            t = psutil.Process(p.pid).cpu_times()
            out[p.pid] = t.user + t.system
    return out


def _stop_cluster(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()

"""A timeline of a fleet analysis's tasks, for ``bench_fleet.py --breakdown``.

:func:`install` wraps the two task functions the executors run (the
reading of a batch of files, the replay of a partition) so that each task
appends one line to ``DIR/PID.jsonl``: its kind, its wall start and end
(``time.time()``), its CPU seconds (thread time) and its size. The wrappers
keep the functions' names, so they are still sent by reference. The bench
installs them in its own process (a forked worker inherits them) and gives
a running cluster's workers this file as a ``--preload`` (with the
directory in ``PODNUMA_BENCH_TIMELINE``).
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ENV = "PODNUMA_BENCH_TIMELINE"


def _wrap(module: Any, name: str, kind: str, size: Any, where: Path) -> None:
    fn = getattr(module, name)
    if getattr(fn, "_timeline", False):
        return

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0, c0 = time.time(), time.thread_time()
        out = fn(*args, **kwargs)
        t1, c1 = time.time(), time.thread_time()
        with open(where / f"{os.getpid()}.jsonl", "a") as f:
            f.write(json.dumps({"pid": os.getpid(), "kind": kind, "t0": t0, "t1": t1,
                                "cpu": c1 - c0, "size": size(args[0])}) + "\n")
        return out

    timed._timeline = True  # type: ignore[attr-defined]
    setattr(module, name, timed)


def install(where: str | Path | None = None) -> None:
    where = Path(where or os.environ[ENV])
    from podnuma.fleet import execute, inputs

    _wrap(inputs, "scan_files", "read", len, where)
    _wrap(execute, "_replay_args", "replay",
          lambda a: sum(execute._weight(n) for n in a[0]), where)


def dask_setup(worker: Any = None) -> None:  # the --preload hook of `dask worker`
    if os.environ.get(ENV):
        install()


def report(where: Path, start: float, end: float, roles: dict[int, str]) -> None:
    """Per process: when its first task started (seconds after ``start``),
    its tasks' wall and CPU, the idle time between its first task's start
    and ``end``, when its last task ended; the tasks' order (the first
    :data:`SHOWN`), each as kind and size @ start + wall / CPU seconds; the
    replay's CPU per pod (all its replay tasks, the first, the others: a
    process's first partition fills its caches); then the replay's CPU per
    pod over every process."""
    rows: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for f in sorted(where.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            rows[r["pid"]].append(r)
    print(f"    timeline (s after the executor was asked for; the command's work ended at {end - start:.2f}):")
    for pid, rs in sorted(rows.items(), key=lambda kv: min(r["t0"] for r in kv[1])):
        rs.sort(key=lambda r: r["t0"])
        busy = sum(r["t1"] - r["t0"] for r in rs)
        first, last = rs[0]["t0"] - start, rs[-1]["t1"] - start
        gaps = sum(max(0.0, b["t0"] - a["t1"]) for a, b in zip(rs, rs[1:], strict=False))
        print(f"    {roles.get(pid, 'process'):16} {pid:>7}: first task at {first:5.2f}, last ends {last:5.2f}, "
              f"{len(rs)} tasks, busy {busy:5.2f} wall / {sum(r['cpu'] for r in rs):5.2f} CPU, gaps between "
              f"tasks {gaps:4.2f}, idle after its last {end - start - last:4.2f}")
        shown = rs if len(rs) <= SHOWN else rs[:SHOWN]
        more = f" ... and {len(rs) - SHOWN} more" if len(rs) > SHOWN else ""
        print("      " + " ".join(f"{'f' if r['kind'] == 'read' else 'p'}{r['size']}@{r['t0'] - start:.2f}+{r['t1'] - r['t0']:.2f}/{r['cpu']:.2f}"
                                  for r in shown) + more)
        replays = [r for r in rs if r["kind"] == "replay"]
        if replays:
            print(f"      replay CPU per pod: {_per_pod(replays)}; its first task {_per_pod(replays[:1])}, "
                  f"the others {_per_pod(replays[1:])}")
    every = [r for rs in rows.values() for r in rs if r["kind"] == "replay"]
    if every:
        print(f"    replay CPU per pod, every process: {_per_pod(every)} "
              f"({sum(r['cpu'] for r in every):.3f} CPU s for {sum(r['size'] for r in every)} pods)")


#: the tasks listed per process (a one-process run reads hundreds of small files)
SHOWN = 40


def _per_pod(rs: list[dict[str, Any]]) -> str:
    """The tasks' CPU per pod replayed, in microseconds."""
    pods = sum(r["size"] for r in rs)
    return f"{1e6 * sum(r['cpu'] for r in rs) / pods:.1f} us" if pods else "-"

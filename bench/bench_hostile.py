"""The web server under the 9-level YAML alias bomb: how long each endpoint
takes to refuse it, sent all at once and one at a time.

Starts ``podnuma serve``'s application on loopback (the real server: the
job processes, their limits, the fork server), then sends the requests of
``tests/web/test_hostile.py`` -- the bomb under an unchecked key of a pod,
a node form, a kubelet configuration and a scenario, to every endpoint,
and a cluster dump whose only file is a bomb -- first all at once (one
thread each), then one after another, while a client keeps asking
``GET /api/examples``. Prints each request's status and seconds, the
slowest, and the slowest answer to the other client meanwhile. A
benchmark, not a test: it asserts nothing about time.

    python bench/bench_hostile.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web.conftest import running  # noqa: E402
from tests.web.test_api import call  # noqa: E402
from tests.web.test_hostile import requests  # noqa: E402


def _send(url: str, cases: list[tuple[str, bytes, str]], together: bool) -> list[tuple[str, int, float]]:
    out: list[tuple[str, int, float] | None] = [None] * len(cases)

    def one(i: int) -> None:
        path, body, ctype = cases[i]
        start = time.monotonic()
        status, _, _ = call(url + path, body, ctype)
        out[i] = (path, status, time.monotonic() - start)

    if together:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(cases))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        for i in range(len(cases)):
            one(i)
    return [o for o in out if o is not None]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    cases = requests()
    with running(time_limit=20.0, workers=2) as url:
        for mode in ("together", "one at a time"):
            worst: list[float] = []
            other: list[float] = []
            stop = threading.Event()

            def ask(stop: threading.Event, other: list[float]) -> None:
                while not stop.is_set():
                    start = time.monotonic()
                    call(url + "/api/examples")
                    other.append(time.monotonic() - start)
                    time.sleep(0.05)

            watcher = threading.Thread(target=ask, args=(stop, other))
            watcher.start()
            rows: list[tuple[str, int, float]] = []
            for _ in range(args.rounds):
                rows.extend(_send(url, cases, mode == "together"))
            stop.set()
            watcher.join()
            statuses = sorted({s for _, s, _ in rows})
            secs = [s for _, _, s in rows]
            worst = sorted(secs)
            print(f"{mode}: {len(rows)} bomb requests ({len(cases)} per round x {args.rounds}), "
                  f"statuses {statuses}; seconds: median {statistics.median(secs):.3f}, "
                  f"slowest {worst[-1]:.3f}; GET /api/examples meanwhile: {len(other)} answers, "
                  f"slowest {max(other):.3f} s")
            slowest = max(rows, key=lambda r: r[2])
            print(f"  slowest request: {slowest[0]} -> {slowest[1]} in {slowest[2]:.3f} s")


if __name__ == "__main__":
    main()

"""``podnuma serve`` under load: ``POST /api/simulate`` of the demo scenario.

Starts the real server (``python -m podnuma.cli serve --port 0``, loopback,
its default limits and sandboxed job processes), waits until it answers,
then runs CLIENTS concurrent clients (threads, one keep-alive HTTP
connection each) that each post the embedded demo scenario REQUESTS times.
Prints the latency of a request (median, 90th percentile, maximum), the
requests per second, the errors (any answer but 200, or a body that is
not the simulate document), and the CPU time a request costs (milliseconds
of the server's process and of its job processes, from ``psutil`` where it
is installed: on a loaded machine the figure that moves least). A few
requests are sent first, one at a time, as a warm-up, and timed on their
own: one request on an idle server. ``--distinct`` makes every request's
body different (a YAML comment numbering it), so that nothing the server
could keep from an earlier request answers it.

``--variant LABEL=PYTHON[:SRC]`` (repeatable) starts the server with
another interpreter (another install) and, given SRC, ``PYTHONPATH=SRC``:
before and after in one invocation. A benchmark, not a test.

    python bench/bench_serve.py [--clients 20] [--requests 10] [--workers N]
        [--distinct] [--variant LABEL=PYTHON[:SRC] ...]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time

from podnuma.service.scenario import demo_text


def _start(python: str, src: str | None, workers: int | None) -> tuple[subprocess.Popen[str], int]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    cmd = [python, "-m", "podnuma.cli", "serve", "--port", "0"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    port = None
    while time.monotonic() < deadline and port is None:
        line = proc.stdout.readline()
        if not line:
            break
        for word in line.replace("/", " ").split():
            if word.startswith("127.0.0.1:"):
                port = int(word.split(":")[1].rstrip("."))
    if port is None:
        proc.kill()
        raise SystemExit("the server did not say its port")
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # drain its output
    return proc, port


def _post(conn: http.client.HTTPConnection, body: bytes) -> tuple[float, bool]:
    t0 = time.perf_counter()
    conn.request("POST", "/api/simulate?name=demo.yaml", body,
                 {"Content-Type": "application/yaml", "Host": "127.0.0.1"})
    resp = conn.getresponse()
    data = resp.read()
    seconds = time.perf_counter() - t0
    ok = resp.status == 200 and b'"steps"' in data[:4096] and len(json.loads(data)["steps"]) > 0
    return seconds, ok


def _cpu(pid: int) -> tuple[float, float] | None:
    """CPU seconds of the server's process and of all its descendants (the
    fork server and the job processes), or None without psutil."""
    try:
        import psutil  # type: ignore[import-untyped]
    except ImportError:
        return None
    top = psutil.Process(pid)
    own = sum(top.cpu_times()[:2])
    jobs = 0.0
    for child in top.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            jobs += sum(child.cpu_times()[:2])
    return own, jobs


def run(
    python: str, src: str | None, clients: int, requests: int, workers: int | None,
    distinct: bool,
) -> None:
    proc, port = _start(python, src, workers)
    text = demo_text()
    counter = iter(range(1 << 62))
    count_lock = threading.Lock()

    def body() -> bytes:
        if not distinct:
            return text.encode("utf-8")
        with count_lock:
            n = next(counter)
        return f"{text}\n# request {n}\n".encode()

    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        idle = [_post(conn, body()) for _ in range(5)]
        conn.close()
        latencies: list[float] = []
        errors = 0
        lock = threading.Lock()

        def client() -> None:
            nonlocal errors
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for _ in range(requests):
                try:
                    seconds, ok = _post(c, body())
                except (OSError, http.client.HTTPException, ValueError):
                    seconds, ok = float("nan"), False
                    c.close()
                    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                with lock:
                    if ok:
                        latencies.append(seconds)
                    else:
                        errors += 1
            c.close()

        threads = [threading.Thread(target=client) for _ in range(clients)]
        cpu0 = _cpu(proc.pid)
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        cpu1 = _cpu(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
    ms = sorted(x * 1e3 for x in latencies)
    idle_ms = statistics.median(x[0] * 1e3 for x in idle)
    if not ms:
        print(f"  no successful request; errors {errors}")
        return
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    print(f"  idle: {idle_ms:.1f} ms a request; {clients} clients x {requests}: median "
          f"{statistics.median(ms):.1f} ms, p90 {p90:.1f} ms, max {ms[-1]:.1f} ms, "
          f"{len(ms) / wall:.0f} requests/s, errors {errors}", flush=True)
    if cpu0 is not None and cpu1 is not None:
        n = clients * requests
        server, jobs = ((cpu1[i] - cpu0[i]) * 1e3 / n for i in range(2))
        print(f"  CPU a request: {server + jobs:.2f} ms ({server:.2f} ms the server's process, "
              f"{jobs:.2f} ms its job processes)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--requests", type=int, default=10, help="per client")
    ap.add_argument("--workers", type=int, default=None, help="serve --workers (default: its own)")
    ap.add_argument("--distinct", action="store_true",
                    help="a different body for every request (a numbered YAML comment)")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=PYTHON[:SRC]")
    args = ap.parse_args()
    variants = []
    for v in args.variant:
        label, _, rest = v.partition("=")
        python, _, src = rest.partition(":")
        variants.append((label, python or sys.executable, src or None))
    if not variants:
        variants = [("this", sys.executable, None)]
    print(f"POST /api/simulate (the demo scenario), load {os.getloadavg()[0]:.1f}")
    for label, python, src in variants:
        print(f"{label}:", flush=True)
        run(python, src, args.clients, args.requests, args.workers, args.distinct)


if __name__ == "__main__":
    main()

"""How ``podnuma simulate`` scales with the number of steps.

Generates scenarios of N steps (default 1,000, 10,000 and 100,000) on the
node of ``bench_admission.py`` (256 CPUs, 8 NUMA nodes, static CPU manager):
Guaranteed pods of mixed sizes arrive, and the oldest running pods are
removed whenever the next one would not fit, so the node stays busy and the
number of running pods stays bounded. Each scenario is run by the real
command line in a child process, ``podnuma simulate FILE -o FORMAT``, its
output written to a file; the table gives per size the wall time, the
child's CPU time (user + system: the figure to compare on a shared,
loaded machine), its peak resident memory and the output size. Linear cost shows as a
constant time per step and a peak memory that does not grow with N.

``--variant LABEL=PYTHON[:SRC]`` (repeatable) runs each scenario with
another interpreter (another install: a compiled or an older build) and,
given ``SRC``, with ``PYTHONPATH=SRC`` (a checkout's ``src/``, e.g. one of
an older commit): before and after in the same invocation, side by side,
with each variant's time as a ratio to the first one's. Without it, one
variant: this interpreter.

A benchmark, not a test.

    python bench/bench_scaling.py [--sizes 1000,10000,100000] [-o json|yaml|table]
        [--input json|yaml] [--topology-policy POLICY] [--memory-static]
        [--timeout SECONDS] [--variant LABEL=PYTHON[:SRC] ...] [--colour]

``--input yaml`` writes the scenarios as YAML instead of JSON (either is
read in one pass, a step at a time). ``--colour`` runs the child with
``FORCE_COLOR=1``: the table (``-o table``) with its colours, as on a
terminal, into the output file. Under ``--topology-policy restricted``
or ``single-numa-node`` the scenario is written by playing this
checkout's engine along, so that no step removes a pod the node rejected.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

import yaml

SIZES = (1, 2, 4, 8, 3, 16, 2, 6, 1, 12)
NODE = {
    "synthetic": {
        "sockets": 2,
        "numaNodesPerSocket": 4,
        "coresPerNumaNode": 16,
        "threadsPerCore": 2,
        "memoryPerNumaNode": "256Gi",
    }
}
FREE_CPUS = 256 - 2


def _pod(i: int, cpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"bench-{i}", "namespace": "bench", "uid": f"uid-{i:07d}"},
        "spec": {
            "containers": [
                {"name": "app", "resources": {"limits": {"cpu": str(cpus), "memory": "1Gi"}}}
            ]
        },
    }


def scenario(steps: int, kubelet_config: dict[str, Any]) -> dict[str, Any]:
    """A scenario of exactly ``steps`` steps (adds and removals). Under a
    topology policy that can reject a pod (``restricted``,
    ``single-numa-node``), the node is played as the scenario is written
    (this checkout's engine), so that only admitted pods are removed."""
    head: dict[str, Any] = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": NODE,
        "kubeletConfig": kubelet_config,
    }
    admits = _admission(head)
    out: list[dict[str, Any]] = []
    running: deque[tuple[str, int]] = deque()
    free = FREE_CPUS
    i = 0
    while len(out) < steps:
        size = SIZES[i % len(SIZES)]
        if free < size and running:
            uid, n = running.popleft()
            out.append({"removePod": uid})
            if admits is not None:
                admits(None, uid)
            free += n
            continue
        pod = _pod(i, size)
        out.append({"addPod": pod})
        i += 1
        if admits is not None and not admits(pod, None):
            # rejected: the next step frees the CPUs of the oldest pod
            free = min(free, size - 1)
            continue
        running.append((pod["metadata"]["uid"], size))
        free -= size
    return {**head, "steps": out}


def _admission(head: dict[str, Any]) -> Any:
    """``admits(manifest, None)`` (whether the node admits the pod) and
    ``admits(None, uid)`` (remove it) on the node of ``head``, or ``None``
    when every pod that fits is admitted (no topology policy to refuse it)."""
    if head["kubeletConfig"].get("topologyManagerPolicy", "none") in ("none", "best-effort"):
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from podnuma.api.pod_manifest import parse_pod
    from podnuma.inputs.scenario import load_scenario_text
    from podnuma.scenario.run import start_node

    loaded = load_scenario_text(
        json.dumps({**head, "steps": []}), name="bench.json", base_dir=Path.cwd()
    )
    node = start_node(loaded, step_pod_resources=False)
    gates = loaded.config.feature_gates
    index = 0

    def admits(manifest: dict[str, Any] | None, uid: str | None) -> bool:
        nonlocal index
        index += 1
        if manifest is None:
            node.remove_pod(str(uid), index)
            return True
        return bool(node.add_pod(parse_pod(manifest, gates=gates), index).admitted)

    return admits


def run_one(
    path: Path, output: str, timeout: float, python: str = sys.executable, src: str | None = None,
    colour: bool = False,
) -> tuple[float, float, int, int] | None:
    """(seconds, CPU seconds, peak RSS bytes, output bytes) of one
    ``simulate`` run, or ``None`` if it ran past ``timeout``; ``colour``:
    with ``FORCE_COLOR=1`` (without ``NO_COLOR``)."""
    out_path = path.with_suffix(f".out.{output}")
    env = dict(os.environ)
    # bytecode caching on, as an installed or checked-out podnuma has it:
    # without caches every child would recompile each module it imports
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = src
    if colour:
        env["FORCE_COLOR"] = "1"
        env.pop("NO_COLOR", None)
    with out_path.open("wb") as sink:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [python, "-m", "podnuma.cli", "simulate", str(path), "-o", output],
            stdout=sink, env=env,
        )
        deadline = t0 + timeout
        peak = 0
        while True:
            peak = max(peak, _hiwater(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                proc.wait()
                return None
            time.sleep(0.05)
        seconds = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"simulate failed on {path} (exit {os.waitstatus_to_exitcode(status)})")
    size = out_path.stat().st_size
    out_path.unlink()
    # the child's own peak: its ru_maxrss would count this process's memory
    # at the fork (Linux keeps the high-water mark across exec), which holds
    # the generated scenario
    return seconds, usage.ru_utime + usage.ru_stime, peak or usage.ru_maxrss * 1024, size


def _hiwater(pid: int) -> int:
    """The peak resident memory of process ``pid`` so far, in bytes (0 when
    unknown): ``VmHWM`` of /proc/PID/status."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("-o", "--output", default="json", choices=("json", "yaml", "table"))
    ap.add_argument("--input", default="json", choices=("json", "yaml"),
                    help="the scenario file's format")
    ap.add_argument("--topology-policy", default="none")
    ap.add_argument("--memory-static", action="store_true")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per size, seconds")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=PYTHON[:SRC]")
    ap.add_argument("--colour", action="store_true",
                    help="the child run with FORCE_COLOR=1 (the table's colours, as on a terminal)")
    args = ap.parse_args()
    variants: list[tuple[str, str, str | None]] = []
    for v in args.variant:
        label, _, rest = v.partition("=")
        python, _, src = rest.partition(":")
        variants.append((label, python or sys.executable, src or None))
    if not variants:
        variants = [("this", sys.executable, None)]
    config: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0,128",
        "topologyManagerPolicy": args.topology_policy,
    }
    if args.memory_static:
        config["memoryManagerPolicy"] = "Static"
        config["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": "100Mi"}}]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(f"podnuma simulate FILE.{args.input} -o {args.output}; "
          f"topology policy {args.topology_policy}; "
          f"memory manager {'Static' if args.memory_static else 'None'}"
          f"{'; FORCE_COLOR=1' if args.colour else ''}")
    print(f"load average {os.getloadavg()[0]:.1f}; CPU: the child's user + system time")
    print(f"{'variant':<16} {'steps':>8} {'seconds':>9} {'us/step':>8} {'CPU s':>8} "
          f"{'CPU us/step':>12} {'peak RSS':>10} {'output':>10} {'CPU vs first':>13}")
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as tmp:
        # one unmeasured run of each variant first (it writes the bytecode caches)
        warm = Path(tmp) / f"warm.{args.input}"
        warm_doc = scenario(1, config)
        warm.write_text(
            json.dumps(warm_doc) if args.input == "json"
            else yaml.dump(warm_doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                           sort_keys=False)
        )
        for _label, python, src in variants:
            run_one(warm, args.output, args.timeout, python, src, args.colour)
        for n in sizes:
            path = Path(tmp) / f"scenario-{n}.{args.input}"
            doc = scenario(n, config)
            path.write_text(
                json.dumps(doc) if args.input == "json"
                else yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                               sort_keys=False)
            )
            first: float | None = None
            for label, python, src in variants:
                res = run_one(path, args.output, args.timeout, python, src, args.colour)
                if res is None:
                    print(f"{label:<16} {n:>8} {'> ' + str(int(args.timeout)) + ' s':>9}   (stopped)")
                    continue
                seconds, cpu, rss, size = res
                first = cpu if first is None else first
                print(f"{label:<16} {n:>8} {seconds:>9.2f} {seconds / n * 1e6:>8.0f} "
                      f"{cpu:>8.2f} {cpu / n * 1e6:>12.1f} "
                      f"{rss / 2**20:>8.0f} MB {size / 2**20:>7.1f} MB {first / cpu:>12.2f}x",
                      flush=True)
            path.unlink()


if __name__ == "__main__":
    main()

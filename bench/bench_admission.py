"""Admission throughput of the CPU manager path.

A synthetic two-socket node with eight NUMA nodes and 256 logical CPUs
(2 sockets x 4 NUMA nodes x 16 cores x 2 threads), CPU manager policy
``static``. 1,000 Guaranteed pods of mixed sizes arrive one after another;
when the next pod would not fit, the oldest running pods are removed first,
so the node stays busy and fragmented. At the end every pod is removed.

Prints pods admitted per second, the median and 99th percentile admission
time, and the removal rate. Rates are given twice: by wall clock and by the
CPU time of this thread (steadier on a shared machine). A benchmark, not a
test: it asserts nothing about time.

The same workload is written as a scenario file (``--scenario-out``); when
the kubelet oracle is available (``PODNUMA_ORACLE`` names its binary, or
``oracle/build`` builds it and Go is installed), ``kubelet-oracle bench``
runs that scenario through the real kubelet managers and the ratio of the
two rates is printed.

Each step's result carries no PodResources ``List`` (the node is built
with ``step_pod_resources=False``), as the oracle's bench builds no step
document: the kubelet answers ``List`` when asked, not on every admission.
``--pod-resources`` builds the list after every step as a scenario run does.

The workload runs ``--repeat`` times (default 5) on fresh nodes and the run
with the median admission rate is reported; every run's rate is printed.

    python bench/bench_admission.py [--pods N] [--repeat R] [--topology-policy POLICY] [--memory-static]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod_manifest import parse_pod

try:
    from podnuma.inputs.discover import load_node
except ImportError:  # trees before the inputs/ layout (before/after runs)
    from podnuma.machine.discover import load_node  # type: ignore[no-redef]
from podnuma.cm.container_manager import Node

try:
    from podnuma import engine_build
except ImportError:  # trees before the optional compiled build (before/after runs)
    def engine_build() -> str:
        return "pure Python"

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
REPO = Path(__file__).resolve().parent.parent


def _pod_doc(i: int, cpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"bench-{i}", "namespace": "bench", "uid": f"uid-{i:05d}"},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "resources": {"limits": {"cpu": str(cpus), "memory": "1Gi"}},
                }
            ]
        },
    }


def _pod(i: int, cpus: int, gates: object) -> object:
    return parse_pod(_pod_doc(i, cpus), gates=gates)  # type: ignore[arg-type]


def oracle_binary() -> str | None:
    """The kubelet oracle: ``PODNUMA_ORACLE``, else ``oracle/build`` when Go
    is installed (it builds the binary and prints its path); ``None`` if
    neither is available."""
    env = os.environ.get("PODNUMA_ORACLE")
    if env:
        return env
    build = REPO / "oracle" / "build"
    if not build.exists() or shutil.which("go") is None:
        return None
    out = subprocess.run([str(build)], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None
    lines = out.stdout.strip().splitlines()
    return lines[-1] if lines else None


def run_oracle(binary: str, scenario: Path) -> dict[str, Any]:
    out = subprocess.run(
        [binary, "bench", str(scenario)], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _run(machine: Any, config: Any, n_pods: int, pod_resources: bool) -> dict[str, Any]:
    """One run of the workload on a fresh node: per-step times and the steps."""
    old_engine = False
    try:
        node = Node(machine, config, step_pod_resources=pod_resources)
    except TypeError:  # engines from before the option build the list every step
        node = Node(machine, config)
        old_engine = True
    pods = [_pod(i, SIZES[i % len(SIZES)], config.feature_gates) for i in range(n_pods)]
    gc.collect()  # each run starts without the previous runs' garbage
    free = machine.topology.num_cpus - 2
    running: deque[tuple[str, int]] = deque()

    # the same workload as scenario steps: ("add", i, size) or ("remove", ref),
    # written out as documents after the run
    plan: list[tuple[Any, ...]] = []
    admit_times: list[float] = []
    admit_cpu: list[float] = []
    remove_times: list[float] = []
    remove_cpu: list[float] = []
    clock = time.perf_counter
    cpu_clock = time.thread_time
    admitted = rejected = 0
    step = 0
    t_all = time.perf_counter()
    for i, pod in enumerate(pods):
        size = SIZES[i % len(SIZES)]
        while free < size and running:
            ref, n = running.popleft()
            plan.append(("remove", ref))
            c0, t0 = cpu_clock(), clock()
            node.remove_pod(ref, step)
            remove_times.append(clock() - t0)
            remove_cpu.append(cpu_clock() - c0)
            free += n
            step += 1
        plan.append(("add", i, size))
        c0, t0 = cpu_clock(), clock()
        result = node.add_pod(pod, step)  # type: ignore[arg-type]
        admit_times.append(clock() - t0)
        admit_cpu.append(cpu_clock() - c0)
        step += 1
        if result.admitted:
            admitted += 1
            running.append((result.pod_uid, size))
            free -= size
        else:
            rejected += 1
    while running:
        ref, _ = running.popleft()
        plan.append(("remove", ref))
        c0, t0 = cpu_clock(), clock()
        node.remove_pod(ref, step)
        remove_times.append(clock() - t0)
        remove_cpu.append(cpu_clock() - c0)
        step += 1
    total = time.perf_counter() - t_all
    steps: list[dict[str, Any]] = [
        {"addPod": _pod_doc(p[1], p[2])} if p[0] == "add" else {"removePod": p[1]} for p in plan
    ]
    return {
        "admit_times": admit_times, "admit_cpu": admit_cpu,
        "remove_times": remove_times, "remove_cpu": remove_cpu,
        "admitted": admitted, "rejected": rejected, "steps_count": step,
        "total": total, "steps": steps, "old_engine": old_engine,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--topology-policy", default="none")
    ap.add_argument("--cpu-options", default="", help="e.g. full-pcpus-only=true")
    ap.add_argument(
        "--memory-static", action="store_true", help="memory manager policy Static"
    )
    ap.add_argument("--scenario-out", type=Path, default=None,
                    help="where to write the workload as a scenario (default: a temp file)")
    ap.add_argument("--no-oracle", action="store_true", help="do not run the kubelet oracle")
    ap.add_argument("--pod-resources", action="store_true",
                    help="build the PodResources List after every step (as a scenario run does)")
    ap.add_argument("--repeat", type=int, default=5,
                    help="runs on fresh nodes; the median run by admission rate is reported")
    args = ap.parse_args()

    machine = load_node(NODE, base_dir=Path("."))
    options = dict(kv.split("=", 1) for kv in args.cpu_options.split(",") if kv)
    kubelet_config: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "cpuManagerPolicyOptions": options,
        "reservedSystemCPUs": "0,128",
        "topologyManagerPolicy": args.topology_policy,
        **(
            {
                "memoryManagerPolicy": "Static",
                # reservedMemory must equal the memory reservations (here
                # the eviction threshold, spelled out)
                "evictionHard": {"memory.available": "100Mi"},
                "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
            }
            if args.memory_static
            else {}
        ),
    }
    config = load_kubelet_config(kubelet_config)
    runs: list[dict[str, Any]] = []
    for r in range(max(1, args.repeat)):
        runs.append(_run(machine, config, args.pods, args.pod_resources))
        if r:
            runs[-1]["steps"] = runs[0]["steps"]  # the same workload: keep one copy
    # the run with the median admission rate is reported (the first run
    # also warms the interpreter's caches; the spread is printed)
    by_rate = sorted(runs, key=lambda r: len(r["admit_times"]) / sum(r["admit_times"]))
    chosen = by_rate[len(by_rate) // 2]
    admit_times, admit_cpu = chosen["admit_times"], chosen["admit_cpu"]
    remove_times, remove_cpu = chosen["remove_times"], chosen["remove_cpu"]
    admitted, rejected, step, total = (
        chosen["admitted"], chosen["rejected"], chosen["steps_count"], chosen["total"]
    )
    steps = chosen["steps"]
    old_engine = bool(chosen["old_engine"])
    pods_n = args.pods
    admit_total = sum(admit_times)
    q = statistics.quantiles(admit_times, n=100)
    print(f"engine: {engine_build()}")
    print(
        f"node: 256 CPUs, 2 sockets, 8 NUMA nodes; topology policy {args.topology_policy}; "
        f"memory manager {'Static' if args.memory_static else 'None'}; "
        f"PodResources List "
        f"{'after every step' if args.pod_resources or old_engine else 'not built per step'}"
        f"{' (this engine always builds it)' if old_engine else ''}"
    )
    print(f"pods: {pods_n} added ({admitted} admitted, {rejected} rejected), all removed")
    rates = [len(r["admit_times"]) / sum(r["admit_times"]) for r in runs]
    print(f"runs: {len(runs)} on fresh nodes; admission rates {', '.join(f'{x:,.0f}' for x in rates)} "
          f"pods/s (the median run below)")
    rate = pods_n / admit_total
    print(f"admission: {rate:,.0f} pods/s, "
          f"median {statistics.median(admit_times) * 1e6:,.0f} us, "
          f"p99 {q[98] * 1e6:,.0f} us; "
          f"by CPU time {pods_n / sum(admit_cpu):,.0f} pods/s, "
          f"median {statistics.median(admit_cpu) * 1e6:,.0f} us")
    print(f"removal: {len(remove_times) / sum(remove_times):,.0f} pods/s, "
          f"median {statistics.median(remove_times) * 1e6:,.0f} us; "
          f"by CPU time {len(remove_cpu) / sum(remove_cpu):,.0f} pods/s")
    print(f"wall time: {total:.2f} s for {step} steps")

    scenario = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": NODE,
        "kubeletConfig": kubelet_config,
        "steps": steps,
    }
    if args.scenario_out is not None:
        path = args.scenario_out
    else:
        fd, name = tempfile.mkstemp(prefix="bench-admission-", suffix=".json")
        os.close(fd)
        path = Path(name)
    path.write_text(json.dumps(scenario))
    print(f"scenario: {path}")
    if args.no_oracle:
        return
    binary = oracle_binary()
    if binary is None:
        print("kubelet: skipped (no oracle: set PODNUMA_ORACLE or install Go for oracle/build)")
        return
    try:
        res = run_oracle(binary, path)
    except subprocess.CalledProcessError as e:
        print(f"kubelet: the oracle failed: {e.stderr.strip() or e}")
        return
    kubelet_rate = float(res["podsPerSecond"])
    print(f"kubelet: {kubelet_rate:,.0f} pods/s, median "
          f"{float(res['medianAdmissionMicros']):,.0f} us "
          f"({res['admitted']} of {res['pods']} admitted); "
          f"podnuma/kubelet ratio {rate / kubelet_rate:.2f}")


if __name__ == "__main__":
    main()

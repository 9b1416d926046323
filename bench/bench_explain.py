"""``podnuma explain`` on a 200-pod scenario: time per rejected pod.

Writes a scenario of 200 addPod steps on a 256-CPU node (4 sockets x 2
NUMA nodes x 16 cores x 2 threads, 8 GPUs, 64Gi per NUMA node), topology manager ``restricted`` with scope ``pod``, static CPU and
memory managers: Guaranteed pods of 1-12 CPUs, some with a GPU, some
Burstable, a few with pod-level resources. The node fills up and the later
pods are rejected. Then it times the explanation of every admission, the
nearest-admissible search included, and prints the time per rejected pod.
Then one rejected pod at a time, as ``podnuma explain FILE --step N`` does
it: in this process (load, run, explain: what the command does after its
imports) and, with ``--cli``, as the command itself in a fresh interpreter
(imports included). Each prints the per-pod maximum, median and mean, wall
clock and CPU time. A benchmark, not a test: it asserts nothing about time.

``--variant LABEL=PYTHON[:SRC]`` (repeatable) runs the whole bench again
with another interpreter (another install) and, given SRC,
``PYTHONPATH=SRC``, one after the other: before and after in one
invocation, on the same scenario file.

    python bench/bench_explain.py [--pods N] [--write FILE] [--steps all|sample|none] [--cli]
        [--variant LABEL=PYTHON[:SRC] ...]
    podnuma explain FILE -o json > /dev/null              # the whole scenario
    podnuma explain FILE --step N -o json > /dev/null     # one rejected pod
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from podnuma.analysis.explain import explain_run, run_for_explain
from podnuma.inputs.scenario import load_scenario
from podnuma.scenario.run import run_scenario

SIZES = (1, 2, 1, 4, 2, 1, 3, 1, 2, 6)


def _container(name: str, cpu: str, memory: str, gpu: bool = False, limits: bool = True) -> dict[str, Any]:
    req: dict[str, Any] = {"cpu": cpu, "memory": memory}
    res: dict[str, Any] = {"requests": dict(req)}
    if limits:
        res["limits"] = dict(req)
    if gpu:
        res["requests"]["example.com/gpu"] = "1"
        res.setdefault("limits", {})["example.com/gpu"] = "1"
    return {"name": name, "image": "busybox", "resources": res}


def scenario(pods: int) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    for i in range(pods):
        meta = {"name": f"app-{i:03d}", "namespace": "bench", "uid": f"uid-{i:05d}"}
        size = SIZES[i % len(SIZES)]
        if i % 17 == 5:
            spec: dict[str, Any] = {
                "resources": {"requests": {"cpu": str(size + 2), "memory": "4Gi"},
                              "limits": {"cpu": str(size + 2), "memory": "4Gi"}},
                "containers": [
                    _container("main", str(size), "2Gi"),
                    {"name": "sidecar", "image": "busybox"},
                ],
            }
        elif i % 7 == 3:
            spec = {"containers": [_container("app", "500m", "1Gi", limits=False)]}
        else:
            spec = {"containers": [_container("app", str(size), f"{size}Gi", gpu=i % 11 == 0)]}
        steps.append({"addPod": {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}})
    return {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": {
            "name": "bench-node",
            "synthetic": {"sockets": 4, "numaNodesPerSocket": 2, "coresPerNumaNode": 16,
                          "threadsPerCore": 2, "memoryPerNumaNode": "64Gi"},
            "devices": {"example.com/gpu": [{"id": f"gpu{n}", "numaNodes": [n]} for n in range(8)]},
        },
        "kubeletConfig": {
            "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0,128",
            "memoryManagerPolicy": "Static",
            "kubeReserved": {"memory": "1Gi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
            "topologyManagerPolicy": "restricted",
            "topologyManagerScope": "pod",
        },
        "steps": steps,
    }


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _summary(label: str, walls: list[float], cpus: list[float]) -> None:
    print(f"{label}: {len(walls)} rejected pod(s); wall max {max(walls):.2f} s, "
          f"median {statistics.median(walls):.2f} s, mean {statistics.fmean(walls):.2f} s; "
          f"CPU max {max(cpus):.2f} s, median {statistics.median(cpus):.2f} s")


def _one_step_in_process(path: Path, index: int) -> tuple[float, float, int]:
    """Load, run and explain one step, as the command does after its imports."""
    w0, c0 = time.perf_counter(), time.process_time()
    loaded = load_scenario(path)
    result = run_for_explain(loaded, step=index)
    doc = explain_run(loaded, result.run, step=index, snapshots=result.snapshots)
    (adm,) = doc["admissions"]
    return time.perf_counter() - w0, time.process_time() - c0, len(adm["suggestions"])


def _one_step_cli(path: Path, index: int) -> tuple[float, float]:
    """``podnuma explain FILE --step N -o json`` in a fresh interpreter."""
    cmd = [sys.executable, "-c", "import sys; from podnuma.cli import main; sys.exit(main())",
           "explain", str(path), "--step", str(index), "-o", "json"]
    c0 = _children_cpu()
    w0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=os.environ.copy())
    return time.perf_counter() - w0, _children_cpu() - c0


def _variants(variants: list[str]) -> None:
    """This bench, as invoked but without ``--variant``, once per variant."""
    argv = []
    skip = False
    for a in sys.argv[1:]:
        if skip:
            skip = False
            continue
        if a == "--variant":
            skip = True
            continue
        if a.startswith("--variant="):
            continue
        argv.append(a)
    print(f"load {os.getloadavg()[0]:.1f}", flush=True)
    for v in variants:
        label, _, rest = v.partition("=")
        python, _, src = rest.partition(":")
        env = os.environ.copy()
        if src:
            env["PYTHONPATH"] = src
        print(f"{label}:", flush=True)
        subprocess.run([python or sys.executable, __file__, *argv], check=True, env=env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pods", type=int, default=200)
    ap.add_argument("--write", type=Path, default=None,
                    help="where to write the scenario (default: a file in the temp directory)")
    ap.add_argument("--steps", choices=("all", "sample", "none"), default="all",
                    help="which rejected pods to explain one at a time (--step N)")
    ap.add_argument("--cli", action="store_true",
                    help="also run the command itself for each of them (a fresh interpreter each)")
    ap.add_argument("--no-whole", action="store_true", help="skip the whole-scenario explanation")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=PYTHON[:SRC]")
    args = ap.parse_args()
    if args.variant:
        _variants(args.variant)
        return
    if args.write is None:
        args.write = Path(tempfile.gettempdir()) / f"bench-explain-{args.pods}.yaml"
    args.write.write_text(yaml.safe_dump(scenario(args.pods), sort_keys=False))
    loaded = load_scenario(args.write)
    t0 = time.perf_counter()
    result = run_scenario(loaded)
    t_run = time.perf_counter() - t0
    rejected = [s for s in result.steps if s.op == "addPod" and s.admitted is False]
    print(f"{args.write}: {len(result.steps)} steps, {len(rejected)} rejected; run {t_run:.2f} s")
    if not args.no_whole:
        w0, c0 = time.perf_counter(), time.process_time()
        doc = explain_run(loaded, result)
        total, cpu = time.perf_counter() - w0, time.process_time() - c0
        print(f"whole scenario explained in {total:.2f} s, CPU {cpu:.2f} s "
              f"({total / max(1, len(rejected)):.2f} s per rejected pod, search included)")
        suggestions = sum(len(a["suggestions"]) for a in doc["admissions"])
        effects = sum(len(x["sideEffects"]) for a in doc["admissions"] for x in a["alternatives"])
        print(f"  {suggestions} suggestions, {effects} side effects found")
    if args.steps == "none" or not rejected:
        return
    chosen = rejected if args.steps == "all" else rejected[:: max(1, len(rejected) // 5)]
    walls: list[float] = []
    cpus: list[float] = []
    for s in chosen:
        wall, cpu, n = _one_step_in_process(args.write, s.index)
        walls.append(wall)
        cpus.append(cpu)
        if args.steps == "sample":
            print(f"  step {s.index:3d} {s.pod:16s} {s.reason:28s} {wall:.2f} s, {n} suggestion(s)")
    _summary("--step N in process (load, run, explain)", walls, cpus)
    slowest = sorted(zip(walls, (s.index for s in chosen), strict=True), reverse=True)[:3]
    print("  slowest: " + ", ".join(f"step {i} {w:.2f} s" for w, i in slowest))
    if args.cli:
        walls, cpus = [], []
        for s in chosen:
            wall, cpu = _one_step_cli(args.write, s.index)
            walls.append(wall)
            cpus.append(cpu)
        _summary("podnuma explain FILE --step N (fresh interpreter, imports included)", walls, cpus)
        slowest = sorted(zip(walls, (s.index for s in chosen), strict=True), reverse=True)[:3]
        print("  slowest: " + ", ".join(f"step {i} {w:.2f} s" for w, i in slowest))


if __name__ == "__main__":
    main()

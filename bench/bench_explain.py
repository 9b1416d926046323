"""``podnuma explain`` on a 200-pod scenario: time per rejected pod.

Writes a scenario of 200 addPod steps on a 256-CPU node (4 sockets x 2
NUMA nodes x 16 cores x 2 threads, 8 GPUs, 64Gi per NUMA node), topology manager ``restricted`` with scope ``pod``, static CPU and
memory managers: Guaranteed pods of 1-12 CPUs, some with a GPU, some
Burstable, a few with pod-level resources. The node fills up and the later
pods are rejected. Then it times the explanation of every admission, the
nearest-admissible search included, and prints the time per rejected pod.
A benchmark, not a test: it asserts nothing about time.

    python bench/bench_explain.py [--pods N] [--write FILE]
    podnuma explain FILE -o json > /dev/null     # the same, through the CLI
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import yaml

from podnuma.analysis.explain import explain_run
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pods", type=int, default=200)
    ap.add_argument("--write", type=Path, default=Path("bench-explain-200.yaml"))
    args = ap.parse_args()
    args.write.write_text(yaml.safe_dump(scenario(args.pods), sort_keys=False))
    loaded = load_scenario(args.write)
    t0 = time.perf_counter()
    result = run_scenario(loaded)
    t_run = time.perf_counter() - t0
    rejected = [s for s in result.steps if s.op == "addPod" and s.admitted is False]
    print(f"{args.write}: {len(result.steps)} steps, {len(rejected)} rejected; run {t_run:.2f} s")
    t0 = time.perf_counter()
    doc = explain_run(loaded, result)
    total = time.perf_counter() - t0
    print(f"whole scenario explained in {total:.2f} s "
          f"({total / max(1, len(rejected)):.2f} s per rejected pod, search included)")
    suggestions = sum(len(a["suggestions"]) for a in doc["admissions"])
    effects = sum(len(x["sideEffects"]) for a in doc["admissions"] for x in a["alternatives"])
    print(f"  {suggestions} suggestions, {effects} side effects found")
    per: list[float] = []
    for s in rejected[:: max(1, len(rejected) // 5)]:
        t0 = time.perf_counter()
        doc = explain_run(loaded, result, step=s.index)
        per.append(time.perf_counter() - t0)
        (adm,) = doc["admissions"]
        print(f"  step {s.index:3d} {s.pod:16s} {s.reason:28s} {per[-1]:.2f} s, "
              f"{len(adm['suggestions'])} suggestion(s)")
    if per:
        print(f"one rejected pod alone (--step; the re-runs are not shared): max {max(per):.2f} s, "
              f"mean {sum(per) / len(per):.2f} s")


if __name__ == "__main__":
    main()

"""The node's pod capacity: the kubelet keeps ``maxPods`` and ``podsPerCore``
of its configuration (``NewMainKubelet``) and its node-status setter
(``nodestatus.MachineInfo``, pkg/kubelet/kubelet_node_status.go) makes
``status.capacity[pods]`` of them: ``maxPods``, or, with ``podsPerCore``
above 0, the smaller of ``podsPerCore`` times cadvisor's ``NumCores`` (the
logical CPU count) and ``maxPods``. The predicate admit handler then refuses
the pod one past that count with ``OutOfpods``.

podnuma's reading is compared with the kubelet's own code (the kubelet
oracle): the capacity its node status reports, every admission of a
scenario that fills the node with pods, and the density ``podnuma advise``
gives when the pod count is what stops the copies (replayed through the
scenario it writes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.api.kubeletconfig import max_pods
from podnuma.cli import cli
from podnuma.inputs.scenario import load_scenario
from tests.oracle.harness import run_both, run_oracle, write_scenario

ROOT = Path(__file__).resolve().parents[2]
WHATIF = ROOT / "examples" / "whatif"

#: 2 cores of 2 threads: 4 logical CPUs (cadvisor's NumCores), 2 physical cores
SMALL_HT = {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 2, "threadsPerCore": 2,
            "memoryPerNumaNode": "8Gi"}
#: 2 single-threaded cores
TWO_CPUS = {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 2, "threadsPerCore": 1,
            "memoryPerNumaNode": "8Gi"}

#: (machine, configuration, the pod capacity the kubelet's node status gives)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], int]] = {
    "default maxPods": (SMALL_HT, {}, 110),
    "maxPods 0 is the default": (SMALL_HT, {"maxPods": 0}, 110),
    "maxPods 5": (SMALL_HT, {"maxPods": 5}, 5),
    "maxPods 1": (TWO_CPUS, {"maxPods": 1}, 1),
    "podsPerCore 1, two CPUs": (TWO_CPUS, {"podsPerCore": 1}, 2),
    "podsPerCore counts logical CPUs": (SMALL_HT, {"podsPerCore": 1}, 4),
    "podsPerCore under maxPods": (SMALL_HT, {"podsPerCore": 3, "maxPods": 20}, 12),
    "maxPods under podsPerCore": (SMALL_HT, {"podsPerCore": 3, "maxPods": 5}, 5),
    "podsPerCore above the default maxPods": (SMALL_HT, {"podsPerCore": 100}, 110),
}


def _besteffort(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "x"}, "spec": {"containers": [{"name": "c"}]}}


def _guaranteed(name: str) -> dict[str, Any]:
    resources = {"limits": {"cpu": "1", "memory": "64Mi"}}
    return {"metadata": {"name": name, "namespace": "x"},
            "spec": {"containers": [{"name": "c", "resources": resources}]}}


def _scenario(machine: dict[str, Any], config: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "podnuma.io/v1", "kind": "Scenario",
            "node": {"name": "n1", "synthetic": machine},
            "kubeletConfig": {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                              **config},
            "steps": [{"addPod": p} for p in pods]}


@pytest.mark.parametrize("case", list(CASES))
def test_the_pod_capacity_is_the_kubelets(oracle_binary: str, tmp_path: Path, case: str) -> None:
    """The node status's pod capacity, for maxPods and podsPerCore, is the
    one podnuma gives the predicate fit."""
    machine, config, capacity = CASES[case]
    path = write_scenario(_scenario(machine, config, []), tmp_path / "s.yaml")
    proc = subprocess.run([oracle_binary, "nodestatus", str(path)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    assert status["capacity"]["pods"] == str(capacity)
    assert status["allocatable"]["pods"] == str(capacity)
    scenario = load_scenario(str(path))
    assert max_pods(scenario.config, scenario.machine.topology.num_cpus) == capacity


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][2] < 110])
def test_the_pod_past_the_capacity_is_out_of_pods_in_both(oracle_binary: str, tmp_path: Path, case: str) -> None:
    """A node filled with BestEffort pods (only the pod count limits them)
    admits exactly its pod capacity, then refuses every further pod with
    ``OutOfpods``, in podnuma as in the kubelet's code; every step's
    admission, reason and message agree."""
    machine, config, capacity = CASES[case]
    doc = _scenario(machine, config, [_besteffort(f"p{i}") for i in range(capacity + 2)])
    assert run_both(oracle_binary, [(case, doc)], tmp_path) == []
    (theirs,) = run_oracle(oracle_binary, [write_scenario(doc, tmp_path / "again.json")])
    assert theirs.doc is not None
    steps = theirs.doc["steps"]
    assert [s["admitted"] for s in steps] == [True] * capacity + [False, False]
    assert {s["reason"] for s in steps[capacity:]} == {"OutOfpods"}


def test_a_guaranteed_pod_past_the_capacity_under_the_static_policies(oracle_binary: str, tmp_path: Path) -> None:
    """With the static CPU and memory managers and a restricted topology
    policy, a Guaranteed pod past ``maxPods`` is refused ``OutOfpods`` while
    CPUs are free; what the managers hold afterwards (their checkpoints,
    the shared pool) is the kubelet's, step by step."""
    config = {"maxPods": 2, "cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
              "memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
              "topologyManagerPolicy": "restricted"}
    pods = [_guaranteed(f"g{i}") for i in range(3)]
    doc = _scenario(SMALL_HT, config, pods)
    doc["steps"].append({"removePod": "x/g0"})
    doc["steps"].append({"addPod": _guaranteed("g3")})
    assert run_both(oracle_binary, [("static", doc)], tmp_path, bytes_every=1) == []
    (theirs,) = run_oracle(oracle_binary, [write_scenario(doc, tmp_path / "again.json")])
    assert theirs.doc is not None
    assert [(s.get("admitted"), s.get("reason")) for s in theirs.doc["steps"]] == [
        (True, None), (True, None), (False, "OutOfpods"), (None, None), (True, None)]


#: a small Guaranteed pod: a 1-CPU app and a 1-CPU native sidecar
SMALL = """\
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: ml}
spec:
  initContainers:
    - name: logs
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 64Mi}}
  containers:
    - name: app
      resources: {limits: {cpu: "1", memory: 128Mi}}
"""


@pytest.mark.parametrize(
    ("settings", "density", "stop"),
    [
        (["maxPods=10"], 10, "OutOfpods"),
        (["maxPods=3"], 3, "OutOfpods"),
        # 64 logical CPUs: a pod capacity of 64, above what the CPUs allow
        (["podsPerCore=1"], 31, "TopologyAffinityError"),
        (["podsPerCore=1", "maxPods=20"], 20, "OutOfpods"),
    ],
    ids=["maxPods 10", "maxPods 3", "podsPerCore", "maxPods under podsPerCore"],
)
def test_advise_density_under_the_pod_capacity_replays(
    oracle_binary: str, tmp_path: Path, settings: list[str], density: int, stop: str
) -> None:
    """``podnuma advise`` with a pod capacity set by ``--set`` reports the
    density the pod count allows (the next copy ``OutOfpods``) where the
    count stops the copies before the CPUs do, and the scenario it writes
    replays in the kubelet's code to that density and stop, for the pod as
    written and as rewritten."""
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(SMALL)
    out = tmp_path / "replay.yaml"
    sets = [arg for s in settings for arg in ("--set", s)]
    r = CliRunner().invoke(
        cli,
        ["advise", str(pod_file), "--node", str(WHATIF / "node.yaml"), "--kubelet-config",
         str(WHATIF / "kubelet-config.yaml"), *sets, "--strategy", "max-freed", "--as-scenario", str(out),
         "-o", "json"],
        prog_name="podnuma",
    )
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    (advice,) = report["pods"]
    (ix,) = report["replay"]
    (theirs,) = run_oracle(oracle_binary, [out])
    assert theirs.kind == "ok", theirs.message
    assert theirs.doc is not None
    for form in ("before", "after"):
        figures = advice[form]
        assert (figures["density"], figures["densityStop"]) == (density, stop)
        first = ix[f"{form}Step"]
        copies = theirs.doc["steps"][first: first + ix[f"{form}Copies"]]
        assert sum(1 for s in copies if s["admitted"]) == density
        assert copies[-1]["reason"] == stop

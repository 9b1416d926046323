"""advise proposes another node shape when no pod-level form of a pod is
admitted on the node given: the shape's figures replay. A scenario with the
proposed ``node``, the node's kubelet configuration (the gates the rewrite
needs on) and copies of the proposed pod gives, in podnuma and in the
kubelet oracle alike, the admission, the exclusive CPUs and the density
(copies per node) advise reports; on the node given the same pod is
rejected."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.machine.cpuset import CPUSet
from tests.oracle.harness import compare, run_oracle, run_podnuma, write_scenario

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "ml"},
       "spec": {"initContainers": [{"name": "log", "restartPolicy": "Always",
                                    "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}],
                "containers": [{"name": "train", "resources": {"limits": {"cpu": "8", "memory": "4Gi"}}}]}}
NODE = {"name": "small", "synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                       "threadsPerCore": 2, "memoryPerNumaNode": "16Gi"}}
CONFIG = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
          "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}


def _copies(pod: dict[str, Any], n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        p = copy.deepcopy(pod)
        p["metadata"] = {**p["metadata"], "name": f"{p['metadata']['name']}-{i}"}
        p["metadata"].pop("uid", None)
        out.append({"addPod": p})
    return out


def test_nearest_shape_replays_in_the_oracle(oracle_binary: str, tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(POD))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(NODE))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    got = CliRunner().invoke(cli, ["advise", str(tmp_path / "pod.yaml"), "--node", str(tmp_path / "node.yaml"),
                                   "--kubelet-config", str(tmp_path / "config.yaml"), "-o", "json"])
    assert got.exit_code == 0, got.output
    (advice,) = json.loads(got.stdout)["pods"]
    assert advice["status"] == "skipped" and advice["reason"].startswith("no rewrite is admitted")
    shape = advice["otherNodeShape"]
    assert shape["change"] == "1 more physical core(s) on each of the 2 NUMA node(s)"
    assert shape["tried"] == [] and shape["admitted"] is True

    config = copy.deepcopy(CONFIG)
    if shape["gatesForced"]:
        config["featureGates"] = {g: True for g in shape["gatesForced"]}
    density = shape["density"]
    assert density >= 1
    runs = {}
    for label, node in (("shape", shape["node"]), ("given", NODE)):
        doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": node, "kubeletConfig": config,
               "steps": _copies(shape["pod"], density + 1)}
        path = write_scenario(doc, tmp_path / f"{label}.json")
        mine = run_podnuma(path)
        (theirs,) = run_oracle(oracle_binary, [path])
        assert mine.kind == theirs.kind == "ok", (mine.message, theirs.message)
        assert compare(mine, theirs, doc) == []
        assert theirs.doc is not None
        runs[label] = theirs.doc["steps"]
    steps = runs["shape"]
    assert [s["admitted"] for s in steps] == [True] * density + [False]
    exclusive = CPUSet()
    for c in steps[0]["containers"]:
        if c["isolation"] == "container":
            exclusive = exclusive | CPUSet.parse(c["cpus"])
    assert exclusive.size() == shape["exclusiveCpus"] == 8
    # on the node given, the same pod is rejected: the shape is what admits it
    assert runs["given"][0]["admitted"] is False

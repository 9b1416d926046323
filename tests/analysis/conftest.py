"""Shared pods, nodes and configurations of the what-if tests.

Pods are the KEP-5526 examples and the kubernetes.io tutorial's manifests,
as plain manifests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

Doc = dict[str, Any]


def guaranteed(cpu: str, memory: str, **extra: str) -> Doc:
    both = {"cpu": cpu, "memory": memory, **extra}
    return {"requests": dict(both), "limits": dict(both)}


def kep2_per_container(name: str = "pod-scope-mixed") -> Doc:
    """KEP pod-scope example 2 written per-container: the main container's
    2 CPUs / 2Gi, two Guaranteed sidecars (restartable init containers) of
    1 CPU / 1Gi each (the KEP's 4 CPU / 4Gi pod budget)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "initContainers": [
                {"name": "metrics-sidecar", "image": "registry.k8s.io/pause:3.9",
                 "restartPolicy": "Always", "resources": guaranteed("1", "1Gi")},
                {"name": "logging-sidecar", "image": "registry.k8s.io/pause:3.9",
                 "restartPolicy": "Always", "resources": guaranteed("1", "1Gi")},
            ],
            "containers": [
                {"name": "main-app", "image": "registry.k8s.io/pause:3.9",
                 "resources": guaranteed("2", "2Gi")},
            ],
        },
    }


def kep2_app_sidecars() -> Doc:
    """KEP example 2 as the KEP writes its containers (three app
    containers), per-container, container-2/3 marked as sidecars."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "kep-example-2",
            "annotations": {"podnuma.io/sidecars": "container-2,container-3"},
        },
        "spec": {
            "containers": [
                {"name": "container-1", "image": "example-image", "resources": guaranteed("2", "2Gi")},
                {"name": "container-2", "image": "example-image", "resources": guaranteed("1", "1Gi")},
                {"name": "container-3", "image": "example-image", "resources": guaranteed("1", "1Gi")},
            ]
        },
    }


def tutorial_part_a() -> Doc:
    """Tutorial Part A (pod-level as written): 4 CPU / 4Gi budget, main-app
    2 CPU / 2Gi, two sidecars without resources."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pod-scope-mixed"},
        "spec": {
            "resources": guaranteed("4", "4Gi"),
            "initContainers": [
                {"name": "metrics-sidecar", "image": "registry.k8s.io/pause:3.9", "restartPolicy": "Always"},
                {"name": "logging-sidecar", "image": "registry.k8s.io/pause:3.9", "restartPolicy": "Always"},
            ],
            "containers": [
                {"name": "main-app", "image": "registry.k8s.io/pause:3.9",
                 "resources": guaranteed("2", "2Gi")},
            ],
        },
    }


def tutorial_part_c() -> Doc:
    """Tutorial Part C (pod-level as written): an exclusive 2-CPU sidecar,
    two workers without resources."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "container-scope-mixed"},
        "spec": {
            "resources": guaranteed("4", "4Gi"),
            "initContainers": [
                {"name": "infrastructure-sidecar", "image": "registry.k8s.io/pause:3.9",
                 "restartPolicy": "Always", "resources": guaranteed("2", "2Gi")},
            ],
            "containers": [
                {"name": "worker-1", "image": "registry.k8s.io/pause:3.9"},
                {"name": "worker-2", "image": "registry.k8s.io/pause:3.9"},
            ],
        },
    }


#: The KEP's implied node (notes §1.0): 2 NUMA nodes x 8 CPUs, no SMT,
#: CPU 0 reserved.
KEP_NODE: Doc = {
    "name": "kep-node",
    "synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 8,
                  "threadsPerCore": 1, "memoryPerNumaNode": "16Gi"},
}


def kubelet_config(**over: Any) -> Doc:
    cfg: Doc = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "featureGates": {"PodLevelResourceManagers": True},
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
        "memoryManagerPolicy": "Static",
        "kubeReserved": {"memory": "512Mi"},
        "systemReserved": {"memory": "412Mi"},
        "evictionHard": {"memory.available": "100Mi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
        "topologyManagerPolicy": "restricted",
        "topologyManagerScope": "pod",
    }
    cfg.update(over)
    return {k: v for k, v in cfg.items() if v is not None}


def write(path: Path, *docs: Any) -> Path:
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def kep_files(tmp_path: Path) -> tuple[Path, Path]:
    """(node file, kubelet config file) of the KEP node."""
    return write(tmp_path / "node.yaml", KEP_NODE), write(tmp_path / "kubelet.yaml", kubelet_config())

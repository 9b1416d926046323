"""Scenario documents shared by the scenario and CLI tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml


def pod(
    name: str,
    cpu: str = "2",
    memory: str = "1Gi",
    *,
    namespace: str = "default",
    uid: str | None = None,
    limits_cpu: str | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid is not None:
        meta["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "busybox",
                    "resources": {
                        "requests": {"cpu": cpu, "memory": memory},
                        "limits": {"cpu": limits_cpu or cpu, "memory": memory},
                    },
                }
            ]
        },
    }


BASE: dict[str, Any] = {
    "apiVersion": "podnuma.io/v1",
    "kind": "Scenario",
    "node": {
        "name": "test-node",
        "synthetic": {
            "sockets": 2,
            "numaNodesPerSocket": 1,
            "coresPerNumaNode": 4,
            "threadsPerCore": 2,
            "memoryPerNumaNode": "8Gi",
        },
    },
    "kubeletConfig": {
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
    },
    "steps": [
        {"addPod": pod("a", "2", uid="uid-a")},
        {"addPod": pod("b", "500m", limits_cpu="1")},
    ],
}


def base() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def dump(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False)


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else dump(doc))
    return path

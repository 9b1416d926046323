#!/usr/bin/env python3
"""Regenerate the kubectl dumps of examples/fleet through a real cluster.

Starts etcd and kube-apiserver on loopback (the binaries cluster/build
makes; see docs/real-cluster.md), installs the NodeResourceTopology CRD,
creates the nodes, pods and NodeResourceTopology objects the current dumps
describe through the API (the API server defaults, validates and admits
them; node and pod status go through the status subresource, as a kubelet
writes them), then writes what the real kubectl of the same release prints:

    kubectl get nodes -o json                 > nodes.json
    kubectl get pods -A -o json               > pods.json
    kubectl get noderesourcetopologies -o json > noderesourcetopologies.json

usage: scripts/regen-fleet-dumps.py [DUMP_DIR]   (default examples/fleet)
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.cluster import controlplane  # noqa: E402

DUMPS = {
    "nodes.json": ("nodes",),
    "pods.json": ("pods", "-A"),
    "noderesourcetopologies.json": ("noderesourcetopologies.topology.node.k8s.io",),
}


def unique_names(pods: list[dict[str, Any]]) -> list[str]:
    """A namespace holds one pod of a name (the API server refuses a
    second): a later pod of a name already taken is renamed, its generated
    suffix replaced by one derived from its uid, as a DaemonSet's pods are
    named. Returns the renames."""
    seen: set[tuple[str, str]] = set()
    renamed = []
    for p in pods:
        meta = p["metadata"]
        key = (meta.get("namespace", "default"), meta["name"])
        if key in seen:
            base = meta["name"].rsplit("-", 1)[0]
            new = f"{base}-{hashlib.sha256(meta['uid'].encode()).hexdigest()[:5]}"
            renamed.append(f"{key[0]}/{meta['name']} ({meta['uid']}) -> {new}")
            meta["name"] = new
            key = (key[0], new)
        seen.add(key)
    return renamed


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else REPO / "examples" / "fleet"
    missing = controlplane.missing_binaries()
    if missing:
        print(f"missing in {controlplane.bin_dir()}: {', '.join(missing)} (run cluster/build)",
              file=sys.stderr)
        return 2
    docs = {name: json.loads((out / name).read_text())["items"] for name in DUMPS}
    for line in unique_names(docs["pods.json"]):
        print(f"renamed {line}")
    with tempfile.TemporaryDirectory(prefix="podnuma-regen-") as tmp, \
            controlplane.running(Path(tmp)) as cp:
        cp.install_nrt_crd()
        controlplane.create_nodes(cp, docs["nodes.json"])
        controlplane.create_pods(cp, docs["pods.json"])
        cp.apply([controlplane.creatable(o) for o in docs["noderesourcetopologies.json"]])
        for name, args in DUMPS.items():
            text = cp.kubectl("get", *args, "-o", "json").stdout
            (out / name).write_text(text)
            print(f"{out / name}: {len(json.loads(text)['items'])} items")
        version = cp.kubectl("version", "-o", "json").stdout
        v = json.loads(version)
        print(f"kubectl {v['clientVersion']['gitVersion']}, "
              f"kube-apiserver {v['serverVersion']['gitVersion']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

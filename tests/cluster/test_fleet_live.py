"""``fleet analyze --kubeconfig`` against a real kube-apiserver on loopback.

The example fleet (examples/fleet: nodes, pods, NodeResourceTopology
objects) is created through the API, so the objects podnuma lists are what
the API server made of them (defaulting, validation, admission). The audit
log shows what podnuma asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.replay import replay_node
from podnuma.fleet.whatif import parse_what_if

from . import controlplane
from .controlplane import ControlPlane

EXAMPLE = controlplane.REPO / "examples" / "fleet"
NRT_PATH = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"


def _items(name: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads((EXAMPLE / name).read_text())["items"]
    return items


def _create_nrts(cp: ControlPlane) -> None:
    cp.apply([controlplane.creatable(o) for o in _items("noderesourcetopologies.json")])


@pytest.fixture(scope="module")
def example_cluster(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    cp = control_plane
    cp.install_nrt_crd()
    controlplane.create_nodes(cp, _items("nodes.json"))
    controlplane.create_pods(cp, _items("pods.json"))
    _create_nrts(cp)
    yield cp


def _reader(cp: ControlPlane, name: str, rules: list[dict[str, Any]]) -> Path:
    """A kubeconfig for user ``name`` bound to a ClusterRole of ``rules``."""
    cp.apply([
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": name}, "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}]},
    ], verb="apply")
    return cp.kubeconfig_for(name)


READ_ALL = [
    {"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]},
    {"apiGroups": ["topology.node.k8s.io"], "resources": ["noderesourcetopologies"], "verbs": ["list"]},
]


def _strip(r: dict[str, Any]) -> dict[str, Any]:
    """A node report without the names of the files it came from."""
    out = {k: v for k, v in r.items() if k not in ("configSource", "topologySource", "issues")}
    out["issues"] = sorted(i["message"] for i in r.get("issues", []))
    return out


def _requests(cp: ControlPlane, user: str) -> list[tuple[str, str, dict[str, list[str]]]]:
    """(verb, path, query) of every request ``user`` made."""
    out = []
    for ev in cp.audit():
        if (ev.get("user") or {}).get("username") != user or ev.get("stage") != "ResponseComplete":
            continue
        url = urlparse(ev["requestURI"])
        out.append((ev["verb"], url.path, parse_qs(url.query)))
    return out


def test_live_cluster_reads_like_the_dump(example_cluster: ControlPlane) -> None:
    from podnuma.fleet.live import load_live

    cp = example_cluster
    kubeconfig = _reader(cp, "fleet-reader", READ_ALL)
    fleet = load_live(str(kubeconfig), extra=[EXAMPLE / "fleet.yaml", EXAMPLE / "configz"])
    dump = load_fleet([EXAMPLE])
    names = [n.name for n in dump.nodes]
    assert [n.name for n in fleet.nodes if n.name in names] == names
    w = [parse_what_if("pod-level,scope=pod")]
    live = {n.name: _strip(replay_node(n, w)) for n in fleet.nodes if n.name in names}
    files = {n.name: _strip(replay_node(n, w)) for n in dump.nodes}
    assert live == files
    # The NodeResourceTopology objects came from the API server (named by
    # the API path listed, as a dump of them by its file).
    assert any(n.topology_source == f"NodeResourceTopology <live cluster> {NRT_PATH}" for n in fleet.nodes)
    # A node without a configz file: the API server's proxy cannot reach a
    # kubelet there (the node has no address), so its configz is not
    # readable, it is said so, and the node groups of fleet.yaml stand in.
    c1 = next(n for n in fleet.nodes if n.name == "ip-10-20-1-88.eu-west-1.compute.internal")
    assert c1.config_source.startswith("group general")
    assert any(i.node == c1.name and "configz not readable" in i.message for i in fleet.issues)
    # Read-only: lists and gets only, nodes and pods listed in pages of 500.
    reqs = _requests(cp, "fleet-reader")
    assert {v for v, _, _ in reqs} <= {"list", "get"}
    assert ("list", "/api/v1/pods", {"limit": ["500"]}) in reqs
    assert ("list", "/api/v1/nodes", {"limit": ["500"]}) in reqs
    assert any(p == NRT_PATH for _, p, _ in reqs)
    assert any(p == "/api/v1/nodes/ip-10-20-1-88.eu-west-1.compute.internal/proxy/configz"
               for _, p, _ in reqs)


def test_many_pods_come_in_pages(example_cluster: ControlPlane) -> None:
    """1,001 more pods on one more node: the pod list takes three pages of
    500 (limit, then continue tokens the API server issued), and every pod
    is counted once."""
    from podnuma.fleet.live import load_live

    cp = example_cluster
    node = "paging-node"
    controlplane.create_nodes(cp, [{
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": node},
        "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "2000"},
                   "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "2000"}},
    }])
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"p-{i:04d}", "namespace": "paging"},
             "spec": {"nodeName": node, "containers": [{
                 "name": "c", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]},
             "status": {"phase": "Running"}}
            for i in range(1001)]
    before = len(cp.get_json("pods", "-A")["items"])
    controlplane.create_pods(cp, pods, status=False)
    total = len(cp.get_json("pods", "-A")["items"])
    assert total == before + 1001

    kubeconfig = _reader(cp, "paging-reader", READ_ALL)
    fleet = load_live(str(kubeconfig), extra=[EXAMPLE / "fleet.yaml"])
    assert fleet.pods_total == total
    pod_lists = [q for v, p, q in _requests(cp, "paging-reader") if v == "list" and p == "/api/v1/pods"]
    assert len(pod_lists) == 3
    assert pod_lists[0] == {"limit": ["500"]}
    assert all(q["limit"] == ["500"] and q["continue"][0] for q in pod_lists[1:])
    assert len({q["continue"][0] for q in pod_lists[1:]}) == 2
    spec = next(n for n in fleet.nodes if n.name == node)
    assert len(spec.pods or ()) == 1001
    assert len({p["metadata"]["name"] for p in spec.pods or ()}) == 1001


def test_without_the_crd_there_are_no_topology_objects_and_no_warning(
        example_cluster: ControlPlane) -> None:
    from podnuma.fleet.live import load_live

    cp = example_cluster
    kubeconfig = _reader(cp, "nocrd-reader", READ_ALL)
    cp.remove_nrt_crd()
    try:
        fleet = load_live(str(kubeconfig), extra=[EXAMPLE / "fleet.yaml", EXAMPLE / "configz"])
    finally:
        cp.install_nrt_crd()
        _create_nrts(cp)
    assert not any("noderesourcetopologies" in n.topology_source for n in fleet.nodes)
    assert not any("NodeResourceTopology" in i.message for i in fleet.issues)
    # The API server answered the list with 404 (no such resource).
    nrt = [ev for ev in cp.audit() if (ev.get("user") or {}).get("username") == "nocrd-reader"
           and urlparse(ev["requestURI"]).path == NRT_PATH]
    assert nrt and all(ev["responseStatus"]["code"] == 404 for ev in nrt)


def test_forbidden_topology_objects_are_a_warning(example_cluster: ControlPlane) -> None:
    from podnuma.fleet.live import load_live

    cp = example_cluster
    kubeconfig = _reader(cp, "no-nrt-reader", READ_ALL[:2])
    fleet = load_live(str(kubeconfig), extra=[EXAMPLE / "fleet.yaml"])
    msgs = [i.message for i in fleet.issues if "NodeResourceTopology" in i.message]
    assert len(msgs) == 1 and "403" in msgs[0], msgs
    assert 'cannot list resource "noderesourcetopologies"' in msgs[0]


def test_user_without_list_permission_gets_one_clear_line(example_cluster: ControlPlane) -> None:
    cp = example_cluster
    kubeconfig = cp.kubeconfig_for("nobody")  # authenticated, bound to nothing
    r = controlplane.podnuma("fleet", "analyze", "--kubeconfig", str(kubeconfig))
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert cp.server in lines[0]
    assert 'User "nobody" cannot list resource "nodes"' in lines[0]
    assert "Traceback" not in r.stderr


def test_cli_reads_the_live_cluster(example_cluster: ControlPlane) -> None:
    cp = example_cluster
    kubeconfig = _reader(cp, "cli-reader", READ_ALL)
    r = controlplane.podnuma("fleet", "analyze", "--kubeconfig", str(kubeconfig), str(EXAMPLE / "fleet.yaml"),
                 str(EXAMPLE / "configz"), "-o", "json", "--what-if", "pod-level")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    by_name = {n["name"]: n for n in doc["nodes"]}
    assert "ip-10-20-1-17.eu-west-1.compute.internal" in by_name
    files = controlplane.podnuma("fleet", "analyze", str(EXAMPLE), "-o", "json", "--what-if", "pod-level")
    dump = {n["name"]: n for n in json.loads(files.stdout)["nodes"]}
    for name, node in dump.items():
        assert _strip(by_name[name]) == _strip(node)

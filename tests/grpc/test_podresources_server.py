"""The PodResources v1 server over a real unix socket, with a real gRPC
client: the KEP-5526 examples (examples/pod-level/*.yaml) against golden
listings (v1 and the legacy v1alpha1 on the same socket), the kubelet's
errors and its rate limit. The topology-policy examples add devices.

Each example is played on a node exactly as ``podnuma simulate`` plays it;
the server then answers from that node. The golden files were reviewed by
hand against the examples' headers (and against the per-example PodResources
expectations of tests/e2e/test_pod_level_examples.py); besides, every
listing must equal the ``podResources`` the simulation reports for its last
step, so the socket and the document can never drift apart.
Regenerate with ``PODNUMA_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import grpc
from podnuma.api.pod import Pod
from podnuma.cm.container_manager import Node
from podnuma.grpc import client
from podnuma.grpc.convert import allocatable_doc, pod_resources_doc
from podnuma.grpc.podresources.v1 import api_pb2 as pb
from podnuma.grpc.podresources.v1alpha1 import api_pb2 as alpha_pb
from podnuma.grpc.podresources.v1alpha1 import api_pb2_grpc as alpha_grpc
from podnuma.grpc.provider import NodeProvider
from podnuma.grpc.ratelimit import TokenBucket
from podnuma.grpc.server import serve_unix
from podnuma.inputs.scenario import load_scenario
from podnuma.scenario.document import build_document
from podnuma.scenario.run import run_scenario

ROOT = Path(__file__).resolve().parents[2]
# The KEP-5526 examples, and the topology-policy examples (they have devices).
EXAMPLES = sorted((ROOT / "examples" / "pod-level").glob("*.yaml")) + sorted(
    (ROOT / "examples" / "topology").glob("*.yaml")
)
GOLDEN = Path(__file__).parent / "golden"


def played(path: Path) -> tuple[Node, list[Pod]]:
    """The node after every step of the scenario, and every pod it was asked
    to admit (admitted or rejected) and that was not removed since."""
    scenario = load_scenario(path)
    node = Node(
        scenario.machine,
        scenario.config,
        cpu_checkpoint=scenario.cpu_checkpoint,
        memory_checkpoint=scenario.memory_checkpoint,
    )
    pods: list[Pod] = []
    for step in scenario.steps:
        if step.op == "addPod":
            assert step.pod is not None
            pods.append(step.pod)
            node.add_pod(step.pod, step.index)
        elif step.op == "removePod":
            assert step.ref is not None
            node.remove_pod(step.ref, step.index)
            # A deleted pod leaves the pod manager: Get no longer finds it.
            pods = [p for p in pods if step.ref not in (p.ref, p.uid, p.name)]
        else:
            assert step.ref is not None and step.container is not None
            node.remove_container(step.ref, step.container, step.index)
    return node, pods


def answers(sock: Path, pods: list[Pod]) -> dict[str, Any]:
    with client.connect(sock) as stub:
        listed = client.list_pods(stub)
        got = {
            f"{p.namespace}/{p.name}": pod_resources_doc(client.get_pod(stub, p.namespace, p.name).pod_resources)
            for p in pods
        }
        alloc = client.allocatable(stub)
    with grpc.insecure_channel(f"unix:{sock}") as channel:
        legacy = alpha_grpc.PodResourcesListerStub(channel).List(alpha_pb.ListPodResourcesRequest(), timeout=10)
    return {
        "v1alpha1": [
            {
                "name": p.name,
                "namespace": p.namespace,
                "containers": {
                    c.name: [[d.resource_name, list(d.device_ids)] for d in c.devices] for c in p.containers
                },
            }
            for p in legacy.pod_resources
        ],
        "list": [pod_resources_doc(p) for p in listed.pod_resources],
        "get": got,
        "allocatable": allocatable_doc(alloc),
    }


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{p.parent.name}/{p.stem}" for p in EXAMPLES])
def test_kep_example_over_the_socket(example: Path, sock_dir: Path) -> None:
    node, pods = played(example)
    sock = sock_dir / "kubelet.sock"
    server = serve_unix(sock, NodeProvider.of(node, pods), bucket=TokenBucket(qps=1e9, burst=1000))
    try:
        got = answers(sock, pods)
    finally:
        server.stop(None)

    # The socket says what the simulation's document says.
    doc = build_document(run_scenario(load_scenario(example)))
    if doc["steps"]:
        assert got["list"] == doc["steps"][-1]["podResources"]
    # Get answers for each listed pod exactly what List says of it.
    for entry in got["list"]:
        assert got["get"][f"{entry['namespace']}/{entry['name']}"] == entry
    # v1alpha1 lists every known pod (Get's), app containers only, with
    # the same devices as v1.
    assert sorted(f"{p['namespace']}/{p['name']}" for p in got["v1alpha1"]) == sorted(got["get"])
    for p in got["v1alpha1"]:
        v1 = got["get"][f"{p['namespace']}/{p['name']}"]
        for name, devs in p["containers"].items():
            (c,) = [c for c in v1["containers"] if c["name"] == name]
            assert devs == [[d["resourceName"], d["deviceIds"]] for d in c["devices"]]

    prefix = "" if example.parent.name == "pod-level" else "topology-"
    golden = GOLDEN / f"{prefix}{example.stem}.json"
    if os.environ.get("PODNUMA_UPDATE_GOLDEN") == "1":
        golden.write_text(json.dumps(got, indent=2) + "\n")
    assert got == json.loads(golden.read_text())


def test_pod_scope_mixed_fields(sock_dir: Path) -> None:
    """KEP pod-scope example 2 spelled out: pod cpu_ids 1-4 with 4Gi on NUMA
    0; container-1 reports its own slice 1-2 (overlapping the pod's), the
    pod-shared-pool containers report no CPU ids and no memory."""
    node, pods = played(ROOT / "examples" / "pod-level" / "pod-scope-2-mixed.yaml")
    sock = sock_dir / "s.sock"
    server = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with client.connect(sock) as stub:
            (pod,) = client.list_pods(stub).pod_resources
    finally:
        server.stop(None)
    assert (pod.name, pod.namespace) == ("pod-scope-mixed", "kep")
    assert list(pod.cpu_ids) == [1, 2, 3, 4]
    assert [(m.memory_type, m.size, [n.ID for n in m.topology.nodes]) for m in pod.memory] == [
        ("memory", 4 << 30, [0])
    ]
    by_name = {c.name: c for c in pod.containers}
    assert [c.name for c in pod.containers] == ["container-1", "container-2", "container-3"]
    assert list(by_name["container-1"].cpu_ids) == [1, 2]
    assert [m.size for m in by_name["container-1"].memory] == [2 << 30]
    for shared in ("container-2", "container-3"):
        assert list(by_name[shared].cpu_ids) == []
        assert list(by_name[shared].memory) == []


def test_sidecars_listed_init_containers_not(sock_dir: Path) -> None:
    node, pods = played(ROOT / "examples" / "pod-level" / "init-and-sidecars.yaml")
    sock = sock_dir / "s.sock"
    server = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with client.connect(sock) as stub:
            pod = client.get_pod(stub, "init", "pipeline").pod_resources
    finally:
        server.stop(None)
    assert [c.name for c in pod.containers] == [
        "sidecar-excl", "sidecar-shared", "app-excl", "app-shared"
    ]


def test_unknown_pod_is_the_kubelets_error(sock_dir: Path) -> None:
    node, pods = played(ROOT / "examples" / "pod-level" / "pod-scope-1-shared.yaml")
    sock = sock_dir / "s.sock"
    server = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with client.connect(sock) as stub, pytest.raises(grpc.RpcError) as err:
            client.get_pod(stub, "kep", "nope")
    finally:
        server.stop(None)
    assert err.value.code() == grpc.StatusCode.UNKNOWN
    assert err.value.details() == "pod nope in namespace kep not found"


def test_rate_limit_burst_then_refill(sock_dir: Path) -> None:
    """100 QPS, burst 10, as the kubelet: with the clock held still, ten
    calls pass and the eleventh is ResourceExhausted; 10 ms later (one
    token at 100/s) one more passes, the next does not."""
    now = [1_000_000_000_000]
    bucket = TokenBucket(clock=lambda: now[0])
    node, pods = played(ROOT / "examples" / "pod-level" / "pod-scope-1-shared.yaml")
    sock = sock_dir / "s.sock"
    server = serve_unix(sock, NodeProvider.of(node, pods), bucket=bucket)
    results: list[str] = []

    def call(stub: Any) -> None:
        try:
            stub.List(pb.ListPodResourcesRequest(), timeout=10)
            results.append("ok")
        except grpc.RpcError as e:
            assert e.details() == "rejected by rate limit"
            results.append(e.code().name)

    try:
        with client.connect(sock) as stub:
            for _ in range(11):
                call(stub)
            now[0] += 10_000_000  # 10 ms
            call(stub)
            call(stub)
    finally:
        server.stop(None)
    assert results == ["ok"] * 10 + ["RESOURCE_EXHAUSTED", "ok", "RESOURCE_EXHAUSTED"]


def test_stale_socket_replaced_and_regular_file_refused(sock_dir: Path) -> None:
    node, pods = played(ROOT / "examples" / "pod-level" / "pod-scope-1-shared.yaml")
    sock = sock_dir / "s.sock"
    first = serve_unix(sock, NodeProvider.of(node, pods))
    first.stop(None)
    second = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with client.connect(sock) as stub:
            assert len(client.list_pods(stub).pod_resources) == 1
    finally:
        second.stop(None)
    from podnuma.errors import InputError

    plain = sock_dir / "plain"
    plain.write_text("x")
    with pytest.raises(InputError, match=r"plain: exists and is not a socket$"):
        serve_unix(plain, NodeProvider.of(node, pods))
    with pytest.raises(InputError, match=r"plain/s\.sock: cannot make its directory: "):
        serve_unix(plain / "s.sock", NodeProvider.of(node, pods))
    assert plain.read_text() == "x"


def test_a_live_socket_is_not_taken_over(sock_dir: Path) -> None:
    """A second server on a socket another one listens on is refused (it
    would unlink it: the first's clients would lose it); the first serves on."""
    from podnuma.errors import InputError

    node, pods = played(ROOT / "examples" / "pod-level" / "pod-scope-1-shared.yaml")
    sock = sock_dir / "s.sock"
    first = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with pytest.raises(InputError, match="another server is listening on this socket"):
            serve_unix(sock, NodeProvider.of(node, pods))
        with client.connect(sock) as stub:
            assert len(client.list_pods(stub).pod_resources) == 1
    finally:
        first.stop(None)


def test_socket_path_too_long_is_an_input_error(sock_dir: Path) -> None:
    from podnuma.errors import InputError

    node, pods = played(ROOT / "examples" / "pod-level" / "pod-scope-1-shared.yaml")
    long = sock_dir / ("d" * 60) / ("s" * 60 + ".sock")
    with pytest.raises(InputError) as err:
        serve_unix(long, NodeProvider.of(node, pods))
    assert "longer than the 107 a unix socket address holds" in str(err.value)
    assert not long.parent.exists()


def test_list_every_known_pod_when_active_pods_gate_is_off(sock_dir: Path) -> None:
    """With ``KubeletPodResourcesListUseActivePods`` off the kubelet's
    ``List`` asks the pod manager for every pod (``GetPods``): a pod that
    admission rejected is listed, with nothing allocated."""
    import yaml

    from podnuma.inputs.scenario import load_scenario_text

    example = ROOT / "examples" / "pod-level" / "pod-scope-3-empty-shared-pool.yaml"
    doc = yaml.safe_load(example.read_text())
    doc["kubeletConfig"].setdefault("featureGates", {})["KubeletPodResourcesListUseActivePods"] = False
    scenario = load_scenario_text(yaml.safe_dump(doc), name="gate-off.yaml", base_dir=example.parent)
    node = Node(scenario.machine, scenario.config)
    pods = []
    for step in scenario.steps:
        assert step.op == "addPod" and step.pod is not None
        pods.append(step.pod)
        node.add_pod(step.pod, step.index)
    assert not node.pod_resources()  # the pod was rejected: no active pod
    sock = sock_dir / "off.sock"
    server = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with client.connect(sock) as stub:
            listed = client.list_pods(stub)
    finally:
        server.stop(None)
    assert [(p.namespace, p.name) for p in listed.pod_resources] == [("kep", "pod-scope-admission-failure")]
    assert all(not c.cpu_ids and not c.memory for c in listed.pod_resources[0].containers)


def test_the_client_refuses_a_socket_path_too_long_in_one_line(tmp_path: Path) -> None:
    """gRPC would print its own lines of internals, then fail as if a server
    had answered UNKNOWN: one line naming the path, exit 2."""
    from click.testing import CliRunner

    from podnuma.cli import cli

    deep = tmp_path / ("d" * 110)
    deep.mkdir()
    sock = deep / "k.sock"
    sock.write_text("")
    got = CliRunner().invoke(cli, ["podresources", "list", "--socket", str(sock)])
    assert got.exit_code == 2
    assert got.stdout == ""
    size = len(os.fsencode(sock))
    assert got.stderr == (f"error: {sock}: socket path is {size} bytes, longer than the 107 a unix socket "
                          "address holds (give a shorter path, e.g. a relative one)\n")

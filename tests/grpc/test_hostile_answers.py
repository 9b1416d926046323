"""``podnuma podresources list|get|allocatable`` against a hostile server.

The answer on the socket is input podnuma does not control: a real grpcio
server on a unix socket answers what each test gives it, and the command
runs through the real command line (click's runner).

* an id out of what podnuma's CPU sets take (negative, above ``MAX_CPU_ID``,
  ``2**62``), a NUMA node id out of Linux's range: one line naming the
  socket and the field path in the answer, exit 2, whatever the output
  format -- never an internal error, never a set of that size built;
* names, types and device ids with rich markup (``[/]``, ``[red]x[/red]``)
  and control characters (an escape sequence, a line break) are shown
  literally, escaped (``fieldkit.inert``), one row each;
* a CPU list of 400,000 ids is drawn, its text built from the ids, not
  from a set built bit by bit (which took about two minutes; no timing is
  asserted here: the ids far apart below show no such set is built).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import grpc
from podnuma.cli.app import cli
from podnuma.fieldkit import inert
from podnuma.grpc.podresources.v1 import api_pb2 as pb
from podnuma.grpc.podresources.v1 import api_pb2_grpc as pb_grpc
from podnuma.machine.cpuset import MAX_CPU_ID


class _Fake(pb_grpc.PodResourcesListerServicer):
    def __init__(self, pods: list[pb.PodResources], alloc: pb.AllocatableResourcesResponse) -> None:
        self.pods = pods
        self.alloc = alloc

    def List(self, request: Any, context: Any) -> pb.ListPodResourcesResponse:  # noqa: N802 (gRPC's name)
        return pb.ListPodResourcesResponse(pod_resources=self.pods)

    def Get(self, request: Any, context: Any) -> pb.GetPodResourcesResponse:  # noqa: N802
        return pb.GetPodResourcesResponse(pod_resources=self.pods[0])

    def GetAllocatableResources(self, request: Any, context: Any) -> pb.AllocatableResourcesResponse:  # noqa: N802
        return self.alloc


@pytest.fixture
def serve() -> Iterator[Callable[..., str]]:
    """``serve(pods, alloc)``: a server answering them on a fresh socket
    (its path returned); stopped at the end of the test."""
    where = Path(tempfile.mkdtemp(prefix="pnha", dir="/tmp"))  # (a short path: a socket's limit)
    servers: list[grpc.Server] = []

    def start(
        pods: list[pb.PodResources] | None = None, alloc: pb.AllocatableResourcesResponse | None = None
    ) -> str:
        srv = grpc.server(futures.ThreadPoolExecutor(2))
        pb_grpc.add_PodResourcesListerServicer_to_server(
            _Fake(pods or [_pod()], alloc or pb.AllocatableResourcesResponse(cpu_ids=[1])), srv
        )
        sock = str(where / f"s{len(servers)}.sock")
        srv.add_insecure_port(f"unix:{sock}")
        srv.start()
        servers.append(srv)
        return sock

    try:
        yield start
    finally:
        for srv in servers:
            srv.stop(None)
        shutil.rmtree(where, ignore_errors=True)


def _pod(
    name: str = "p", namespace: str = "ns", container: str = "c", cpus: list[int] | None = None, **more: Any
) -> pb.PodResources:
    c = pb.ContainerResources(name=container, cpu_ids=[1] if cpus is None else cpus, **more)
    return pb.PodResources(name=name, namespace=namespace, containers=[c])


def _topo(*ids: int) -> pb.TopologyInfo:
    return pb.TopologyInfo(nodes=[pb.NUMANode(ID=i) for i in ids])


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["podresources", *args])


# -- ids out of range --------------------------------------------------------------

BAD_CPU = [-1, -(2**63), MAX_CPU_ID + 1, 10**12, 2**62]


@pytest.mark.parametrize("output", ["table", "json", "yaml"])
@pytest.mark.parametrize("cpu", BAD_CPU)
def test_a_cpu_id_out_of_range_in_a_listing_is_one_line_naming_socket_and_field(
    serve: Callable[..., str], cpu: int, output: str
) -> None:
    sock = serve([_pod(name="a"), _pod(name="b", cpus=[0, 1, cpu])])
    r = _run("list", "--socket", sock, "-o", output)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr == (
        f"error: {sock}: pod_resources[1].containers[0].cpu_ids[2]: "
        f"CPU id {cpu} out of range (podnuma supports 0-{MAX_CPU_ID})\n"
    )


def test_a_pod_level_cpu_id_and_get_name_their_paths(serve: Callable[..., str]) -> None:
    pod = _pod()
    pod.cpu_ids.extend([4, -7])
    sock = serve([pod])
    r = _run("list", "--socket", sock)
    assert (r.exit_code, r.stderr) == (2, f"error: {sock}: pod_resources[0].cpu_ids[1]: "
                                          f"CPU id -7 out of range (podnuma supports 0-{MAX_CPU_ID})\n")
    r = _run("get", "ns", "p", "--socket", sock)
    assert (r.exit_code, r.stderr) == (2, f"error: {sock}: pod_resources.cpu_ids[1]: "
                                          f"CPU id -7 out of range (podnuma supports 0-{MAX_CPU_ID})\n")


@pytest.mark.parametrize("output", ["table", "json"])
def test_allocatable_cpu_id_out_of_range(serve: Callable[..., str], output: str) -> None:
    sock = serve(alloc=pb.AllocatableResourcesResponse(cpu_ids=[0, -3]))
    r = _run("allocatable", "--socket", sock, "-o", output)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"error: {sock}: cpu_ids[1]: CPU id -3 out of range (podnuma supports 0-{MAX_CPU_ID})\n"


@pytest.mark.parametrize("numa", [-1, 1024, 2**62])
@pytest.mark.parametrize(
    ("where", "path"),
    [
        ("memory", "pod_resources[0].containers[0].memory[0].topology.nodes[1].ID"),
        ("devices", "pod_resources[0].containers[0].devices[0].topology.nodes[1].ID"),
    ],
)
def test_a_numa_id_out_of_range_names_its_path(
    serve: Callable[..., str], numa: int, where: str, path: str
) -> None:
    more: dict[str, Any] = {
        "memory": [pb.ContainerMemory(memory_type="memory", size=1 << 30, topology=_topo(0, numa))]
        if where == "memory" else [],
        "devices": [pb.ContainerDevices(resource_name="x/y", device_ids=["d"], topology=_topo(0, numa))]
        if where == "devices" else [],
    }
    sock = serve([_pod(**more)])
    r = _run("list", "--socket", sock, "-o", "json")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"error: {sock}: {path}: NUMA node id {numa} out of range (Linux supports 0-1023)\n"


def test_allocatable_numa_id_out_of_range(serve: Callable[..., str]) -> None:
    alloc = pb.AllocatableResourcesResponse(
        memory=[pb.ContainerMemory(memory_type="memory", size=1, topology=_topo(-2))]
    )
    sock = serve(alloc=alloc)
    r = _run("allocatable", "--socket", sock)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f"error: {sock}: memory[0].topology.nodes[0].ID: NUMA node id -2 out of range (Linux supports 0-1023)\n"
    )


def test_the_largest_ids_and_sizes_are_taken_and_shown(serve: Callable[..., str]) -> None:
    big = (1 << 64) - 1  # the largest uint64 size
    mem = [pb.ContainerMemory(memory_type="memory", size=big, topology=_topo(1023))]
    sock = serve(
        [_pod(cpus=[MAX_CPU_ID, 0, 1, 2], memory=mem)],
        pb.AllocatableResourcesResponse(cpu_ids=[MAX_CPU_ID], memory=mem),
    )
    r = _run("list", "--socket", sock, "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc[0]["containers"][0]["cpuIds"] == [MAX_CPU_ID, 0, 1, 2]
    assert doc[0]["containers"][0]["memory"][0]["size"] == big
    r = _run("list", "--socket", sock)
    assert r.exit_code == 0, r.output
    assert f"0-2,{MAX_CPU_ID}" in r.stdout and "@1023" in r.stdout
    r = _run("allocatable", "--socket", sock)
    assert r.exit_code == 0, r.output
    assert str(MAX_CPU_ID) in r.stdout and "1023" in r.stdout


# -- hostile text ------------------------------------------------------------------

HOSTILE = [
    "p[/]x",
    "[red]x[/red]",
    "[bold]b",
    "p\x1b]0;pwned\x07\x1b[31mRED\nfake-row",
    "a\rb\x00c\u202ed\u2028e",
]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("field", ["name", "namespace", "container", "memory", "device", "device id"])
def test_every_string_of_a_listing_is_shown_literally_and_inert(
    serve: Callable[..., str], text: str, field: str
) -> None:
    pod = _pod(
        name=text if field == "name" else "p",
        namespace=text if field == "namespace" else "ns",
        container=text if field == "container" else "c",
        memory=[pb.ContainerMemory(memory_type=text if field == "memory" else "memory", size=1 << 30,
                                   topology=_topo(0))],
        devices=[pb.ContainerDevices(resource_name=text if field == "device" else "x/y",
                                     device_ids=[text if field == "device id" else "d0"])],
    )
    sock = serve([pod])
    r = _run("list", "--socket", sock)
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert inert(text) in r.stdout  # literally: no markup read, controls escaped
    assert not any(c in r.stdout for c in "\x1b\x07\x00\r\u202e\u2028")
    # a header, its rule, one row: no line break let in to fake another row
    lines = [line for line in r.stdout.splitlines() if line.strip()]
    assert len(lines) == 3, r.stdout


@pytest.mark.parametrize("text", HOSTILE)
def test_allocatable_strings_are_shown_literally_and_inert(serve: Callable[..., str], text: str) -> None:
    alloc = pb.AllocatableResourcesResponse(
        cpu_ids=[0, 1],
        memory=[pb.ContainerMemory(memory_type=text, size=1 << 30, topology=_topo(0))],
        devices=[pb.ContainerDevices(resource_name=text, device_ids=[text])],
    )
    sock = serve(alloc=alloc)
    r = _run("allocatable", "--socket", sock)
    assert r.exit_code == 0, r.output
    assert r.stdout.count(inert(text)) == 3, r.stdout
    assert not any(c in r.stdout for c in "\x1b\x07\x00\r\u202e\u2028")
    lines = [line for line in r.stdout.splitlines() if line.strip()]
    assert len(lines) == 5, r.stdout  # header, rule, cpu, memory, device


def test_get_shows_a_hostile_name_inert(serve: Callable[..., str]) -> None:
    text = HOSTILE[3]
    sock = serve([_pod(name=text)])
    r = _run("get", "ns", "p", "--socket", sock)
    assert r.exit_code == 0, r.output
    assert inert(text) in r.stdout and "\x1b" not in r.stdout


# -- size --------------------------------------------------------------------------


def test_a_cpu_list_of_400000_ids_is_drawn(serve: Callable[..., str]) -> None:
    sock = serve([_pod(cpus=list(range(0, 800_000, 2)))])
    r = _run("list", "--socket", sock)
    assert r.exit_code == 0, r.output
    assert " 0,2,4,6,8," in r.stdout

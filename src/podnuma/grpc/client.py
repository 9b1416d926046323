"""A PodResources v1 client on a unix socket (what monitoring agents do)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from podnuma.grpc.podresources.v1 import api_pb2 as pb
from podnuma.grpc.podresources.v1 import api_pb2_grpc as pb_grpc

__all__ = ["DEFAULT_TIMEOUT", "connect", "list_pods", "get_pod", "allocatable"]

# Every call gives up after this many seconds.
DEFAULT_TIMEOUT = 10.0


@contextmanager
def connect(socket_path: str | os.PathLike[str]) -> Iterator[pb_grpc.PodResourcesListerStub]:
    """A stub on ``unix:socket_path``; the channel closes on exit."""
    with grpc.insecure_channel(f"unix:{os.fspath(socket_path)}") as channel:
        yield pb_grpc.PodResourcesListerStub(channel)


def list_pods(
    stub: pb_grpc.PodResourcesListerStub, timeout: float = DEFAULT_TIMEOUT
) -> pb.ListPodResourcesResponse:
    return stub.List(pb.ListPodResourcesRequest(), timeout=timeout)


def get_pod(
    stub: pb_grpc.PodResourcesListerStub,
    namespace: str,
    name: str,
    timeout: float = DEFAULT_TIMEOUT,
) -> pb.GetPodResourcesResponse:
    return stub.Get(pb.GetPodResourcesRequest(pod_name=name, pod_namespace=namespace), timeout=timeout)


def allocatable(
    stub: pb_grpc.PodResourcesListerStub, timeout: float = DEFAULT_TIMEOUT
) -> pb.AllocatableResourcesResponse:
    return stub.GetAllocatableResources(pb.AllocatableResourcesRequest(), timeout=timeout)

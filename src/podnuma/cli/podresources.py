"""``podnuma podresources list|get|allocatable``: a PodResources v1 client.

Talks to any PodResources socket -- ``podnuma agent``'s or a real kubelet's
(``/var/lib/kubelet/pod-resources/kubelet.sock``). ``-o json|yaml`` prints
the answer with the protobuf JSON field names, numbers as numbers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import click

from podnuma.cli.options import SocketPath, echo, output_option, socket_problem
from podnuma.errors import InputError

__all__ = ["podresources_command"]


def _call(socket: Path, fn: Callable[[Any], Any]) -> Any:
    """Run ``fn(stub)``; gRPC failures become one-line errors."""
    import grpc
    from podnuma.grpc import client
    from podnuma.grpc.server import check_socket_path

    check_socket_path(socket)  # (no address holds a longer path, whatever is there)
    problem = socket_problem(socket)  # (what is there: not dialled unless a socket)
    if problem is not None:
        raise InputError(f"--socket: {problem}", file=str(socket))
    try:
        with client.connect(socket) as stub:
            return fn(stub)
    except grpc.RpcError as e:
        code = e.code() if hasattr(e, "code") else None
        details = e.details() if hasattr(e, "details") else str(e)
        if code == grpc.StatusCode.UNAVAILABLE:
            raise InputError(f"cannot connect: {details}", file=str(socket)) from None
        name = code.name if code is not None else "UNKNOWN"
        raise InputError(f"{name}: {details}", file=str(socket)) from None


def _checked(socket: Path, at: str, read: Callable[[], Any]) -> Any:
    """``read()`` of the server's answer; its ``InputError`` (a value out of
    range) names the socket and the field path from the answer's top
    (``pod_resources[0].containers[0].cpu_ids[0]``)."""
    try:
        return read()
    except InputError as e:
        raise e.at(at).in_file(str(socket)) from None


def _emit(doc: Any, output: str, table: Callable[[Any], None]) -> None:
    from podnuma.render.output import serialize

    if output == "table":
        table(doc)
    else:
        echo(serialize(doc, output))


def _console() -> Any:
    from podnuma.render.table import make_console

    return make_console(sys.stdout)


_socket = click.option(
    "--socket",
    "socket",
    type=SocketPath(creates=False),
    required=True,
    help="The PodResources unix socket (a kubelet's: /var/lib/kubelet/pod-resources/kubelet.sock).",
)
_output = output_option(
    "podresources", "table for people; json or yaml: the answer, protobuf JSON field names."
)


@click.group("podresources")
def podresources_command() -> None:
    """Query a PodResources v1 API (podnuma agent's or a kubelet's)."""


@podresources_command.command("list")
@_socket
@_output
def list_command(socket: Path, output: str) -> None:
    """List every active pod with its CPU ids, memory and devices."""
    from podnuma.cli.app import _guard

    def go() -> Any:
        from podnuma.grpc import client
        from podnuma.grpc.convert import pod_resources_doc

        resp = _call(socket, client.list_pods)
        return [
            _checked(socket, f"pod_resources[{i}]", partial(pod_resources_doc, p))
            for i, p in enumerate(resp.pod_resources)
        ]

    doc = _guard(go)

    def table(pods: Any) -> None:
        from podnuma.render.podresources import render_pods

        render_pods(pods, _console())

    _guard(lambda: _emit(doc, output, table))


@podresources_command.command("get")
@click.argument("namespace")
@click.argument("name")
@_socket
@_output
def get_command(namespace: str, name: str, socket: Path, output: str) -> None:
    """Show the pod NAMESPACE/NAME (static pods are named NAME-NODE)."""
    from podnuma.cli.app import _guard

    def go() -> Any:
        from podnuma.grpc import client
        from podnuma.grpc.convert import pod_resources_doc

        resp = _call(socket, lambda stub: client.get_pod(stub, namespace, name))
        return _checked(socket, "pod_resources", lambda: pod_resources_doc(resp.pod_resources))

    doc = _guard(go)

    def table(pod: Any) -> None:
        from podnuma.render.podresources import render_pods

        render_pods([pod], _console())

    _guard(lambda: _emit(doc, output, table))


@podresources_command.command("allocatable")
@_socket
@_output
def allocatable_command(socket: Path, output: str) -> None:
    """Show what pods could get: CPUs, memory per NUMA node, devices."""
    from podnuma.cli.app import _guard

    def go() -> Any:
        from podnuma.grpc import client
        from podnuma.grpc.convert import allocatable_doc

        resp = _call(socket, client.allocatable)
        return _checked(socket, "", lambda: allocatable_doc(resp))

    doc = _guard(go)

    def table(alloc: Any) -> None:
        from podnuma.render.podresources import render_allocatable

        render_allocatable(alloc, _console())

    _guard(lambda: _emit(doc, output, table))

"""A PodResources v1 server on a unix socket.

Mirrors ``pkg/kubelet/apis/podresources/server_v1.go`` and the kubelet's
``ListenAndServePodResources`` (``pkg/kubelet/server/server.go``):

* ``List``: every active pod, each with its pod-level CPUs and memory and
  its containers (sidecars, then app containers);
* ``Get``: one pod the node knows (admitted or not), by namespace and name;
  an unknown pod fails with the kubelet's text ``pod NAME in namespace NS
  not found`` and code ``Unknown`` (a plain Go error becomes that code);
* ``GetAllocatableResources``: CPUs, memory and devices pods could get;
* the legacy ``v1alpha1`` ``List`` on the same socket: every pod known
  (not only active ones), app containers, devices;
* one token bucket for the whole server (:mod:`podnuma.grpc.ratelimit`):
  past it a call fails with ``ResourceExhausted``, ``rejected by rate limit``.

What is listed comes from a :class:`PodResourcesProvider` (the agent, or a
node a scenario ran on); the server adds no state of its own. The socket is
a unix socket only, created like the kubelet's (a stale socket file is
removed first). Requests are tiny: the server refuses any above 64 KiB.

The server is gRPC's asyncio one (``grpc.aio``), its loop on a thread of
its own, the handlers on a few threads: a call waits for its request on
the loop, not on a handler's thread, so clients that open calls and never
send them hold no thread and keep no other client waiting (the kubelet's
grpc-go server gives each call a goroutine; a thread-per-call server
with 4 threads was stopped by 4 such calls). Each connection is closed
after :data:`MAX_CONNECTION_AGE_S` (its calls given
:data:`MAX_CONNECTION_GRACE_S` more to end; a client reconnects at once,
gRPC's ``GOAWAY``), which bounds how long a call that is never sent is
kept; and a connection carries at most :data:`MAX_STREAMS` calls at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any, Protocol

from google.protobuf.message import DecodeError

import grpc
from podnuma.cm.podresources_view import AllocatableResources, PodResources
from podnuma.errors import InputError
from podnuma.grpc.convert import allocatable_message, pod_resources_message
from podnuma.grpc.podresources.v1 import api_pb2 as pb
from podnuma.grpc.podresources.v1 import api_pb2_grpc as pb_grpc
from podnuma.grpc.podresources.v1alpha1 import api_pb2 as alpha_pb
from podnuma.grpc.podresources.v1alpha1 import api_pb2_grpc as alpha_grpc
from podnuma.grpc.provider import PodDevices
from podnuma.grpc.ratelimit import LIMIT_EXCEEDED_MESSAGE, TokenBucket

__all__ = [
    "MAX_REQUEST_BYTES",
    "UnixServer",
    "PodResourcesProvider",
    "PodResourcesServicer",
    "check_socket_path",
    "not_found_message",
    "serve_unix",
]

MAX_REQUEST_BYTES = 64 * 1024
#: a connection is closed this long after it was made (``GOAWAY``)...
MAX_CONNECTION_AGE_S = 60
#: ... its calls given this much longer to end, then cancelled
MAX_CONNECTION_GRACE_S = 10
#: the calls one connection carries at once (HTTP/2 ``MAX_CONCURRENT_STREAMS``)
MAX_STREAMS = 100
MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with the terminating NUL

RequestHook = Callable[[str, bool], None]


class PodResourcesProvider(Protocol):
    """What the server lists (the kubelet's pods, CPU, memory and device
    providers, in one)."""

    def list_pod_resources(self) -> Sequence[PodResources]: ...

    def get_pod_resources(self, namespace: str, name: str) -> PodResources | None: ...

    def allocatable_resources(self) -> AllocatableResources: ...

    def list_all_pod_devices(self) -> Sequence[PodDevices]: ...


def not_found_message(namespace: str, name: str) -> str:
    """The kubelet's ``Get`` error for a pod it does not know."""
    return f"pod {name} in namespace {namespace} not found"


class PodResourcesServicer(pb_grpc.PodResourcesListerServicer):
    """The three v1 methods over a provider. ``on_request(method, failed)``
    is called once per call (the kubelet counts requests and errors)."""

    def __init__(self, provider: PodResourcesProvider, on_request: RequestHook | None = None) -> None:
        self._provider = provider
        self._on_request = on_request

    def _count(self, method: str, failed: bool = False) -> None:
        if self._on_request is not None:
            self._on_request(method, failed)

    def List(
        self, request: pb.ListPodResourcesRequest, context: grpc.ServicerContext
    ) -> pb.ListPodResourcesResponse:
        self._count("list")
        pods = self._provider.list_pod_resources()
        return pb.ListPodResourcesResponse(pod_resources=[pod_resources_message(p) for p in pods])

    def Get(
        self, request: pb.GetPodResourcesRequest, context: grpc.ServicerContext
    ) -> pb.GetPodResourcesResponse:
        found = self._provider.get_pod_resources(request.pod_namespace, request.pod_name)
        if found is None:
            self._count("get", failed=True)
            context.abort(
                grpc.StatusCode.UNKNOWN, not_found_message(request.pod_namespace, request.pod_name)
            )
        self._count("get")
        return pb.GetPodResourcesResponse(pod_resources=pod_resources_message(found))

    def GetAllocatableResources(
        self, request: pb.AllocatableResourcesRequest, context: grpc.ServicerContext
    ) -> pb.AllocatableResourcesResponse:
        self._count("get_allocatable")
        return allocatable_message(self._provider.allocatable_resources())


class V1alpha1Servicer(alpha_grpc.PodResourcesListerServicer):
    """The legacy ``v1alpha1`` ``List`` (``server_v1alpha1.go``): every pod
    the node knows, app containers only, devices only."""

    def __init__(self, provider: PodResourcesProvider, on_request: RequestHook | None = None) -> None:
        self._provider = provider
        self._on_request = on_request

    def List(
        self, request: alpha_pb.ListPodResourcesRequest, context: grpc.ServicerContext
    ) -> alpha_pb.ListPodResourcesResponse:
        if self._on_request is not None:
            self._on_request("v1alpha1_list", False)
        return alpha_pb.ListPodResourcesResponse(
            pod_resources=[
                alpha_pb.PodResources(
                    name=p.name,
                    namespace=p.namespace,
                    containers=[
                        alpha_pb.ContainerResources(
                            name=name,
                            devices=[
                                alpha_pb.ContainerDevices(
                                    resource_name=d.resource_name, device_ids=list(d.device_ids)
                                )
                                for d in devices
                            ],
                        )
                        for name, devices in p.containers
                    ],
                )
                for p in self._provider.list_all_pod_devices()
            ]
        )


def _register(server: grpc.aio.Server, service: str, methods: dict[str, tuple[Any, Any, Any]],
              bucket: TokenBucket) -> None:
    """``service``'s methods (handler, request and response types) served
    by ``server``, each request decoded and rate-limited by :func:`_decoding`."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        name: grpc.unary_unary_rpc_method_handler(
            _decoding(fn, request, bucket), request_deserializer=None,
            response_serializer=response.SerializeToString)
        for name, (fn, request, response) in methods.items()
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))


def _decoding(fn: Callable[[Any, Any], Any], request: Any, bucket: TokenBucket) -> Callable[[bytes, Any], Any]:
    """``fn`` given its request decoded from the bytes received, as
    grpc-go's generated handler calls it: the request decoded first (one
    that does not decode fails with ``INTERNAL``, "grpc: error unmarshalling
    request: ...", the decoding error's text protobuf-go's there, the Python
    protobuf's here), then the kubelet's rate limit
    (``LimiterUnaryServerInterceptor``: one token a call, none spent on a
    request that did not decode nor on an unknown method), then ``fn``."""
    def handle(raw: bytes, context: Any) -> Any:
        try:
            message = request.FromString(raw)
        except DecodeError as e:
            context.abort(grpc.StatusCode.INTERNAL, f"grpc: error unmarshalling request: {e}")
        if not bucket.allow():
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, LIMIT_EXCEEDED_MESSAGE)
        return fn(message, context)

    handle.__name__ = getattr(fn, "__name__", "handle")
    return handle


class UnixServer:
    """A started PodResources server: ``stop(grace)`` ends it (the calls
    under way given ``grace`` seconds, ``None``: none, and then it has
    ended when ``stop`` returns) and returns an event set once it has
    ended, as ``grpc.Server.stop`` does."""

    def __init__(self, loop: asyncio.AbstractEventLoop, server: grpc.aio.Server,
                 thread: threading.Thread, pool: futures.ThreadPoolExecutor) -> None:
        self._loop = loop
        self._server = server
        self._thread = thread
        self._pool = pool
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._stopping = False

    def stop(self, grace: float | None) -> threading.Event:
        with self._lock:
            if self._stopping:
                return self._stopped
            self._stopping = True
        # (no new call is taken from now on; those under way are given
        # ``grace``, then cancelled)
        ending = (asyncio.run_coroutine_threadsafe(self._server.stop(grace), self._loop)
                  if self._loop.is_running() else None)

        def finish() -> None:
            try:
                if ending is not None:
                    with contextlib.suppress(Exception):
                        ending.result()
                    with contextlib.suppress(RuntimeError):  # (a loop closed meanwhile)
                        self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join()
                self._pool.shutdown(wait=True)
            finally:
                self._stopped.set()

        if grace:
            threading.Thread(target=finish, name="podresources-stop", daemon=True).start()
        else:  # (nothing to wait for: ended before this returns, its socket closed)
            finish()
        return self._stopped


def _start(path: Path, provider: PodResourcesProvider, bucket: TokenBucket,
           on_request: RequestHook | None, max_workers: int) -> UnixServer:
    """The server made, bound and started on a loop of its own thread."""
    loop = asyncio.new_event_loop()
    pool = futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="podresources")
    made: dict[str, Any] = {}

    async def make() -> grpc.aio.Server:
        server = grpc.aio.server(
            migration_thread_pool=pool,
            options=[
                ("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
                ("grpc.max_connection_age_ms", MAX_CONNECTION_AGE_S * 1000),
                ("grpc.max_connection_age_grace_ms", MAX_CONNECTION_GRACE_S * 1000),
                ("grpc.max_concurrent_streams", MAX_STREAMS),
            ],
        )
        # The kubelet registers the legacy v1alpha1 service first, then v1.
        alpha = V1alpha1Servicer(provider, on_request)
        v1 = PodResourcesServicer(provider, on_request)
        _register(server, "v1alpha1.PodResourcesLister", {
            "List": (alpha.List, alpha_pb.ListPodResourcesRequest, alpha_pb.ListPodResourcesResponse)}, bucket)
        _register(server, "v1.PodResourcesLister", {
            "List": (v1.List, pb.ListPodResourcesRequest, pb.ListPodResourcesResponse),
            "GetAllocatableResources": (v1.GetAllocatableResources, pb.AllocatableResourcesRequest,
                                        pb.AllocatableResourcesResponse),
            "Get": (v1.Get, pb.GetPodResourcesRequest, pb.GetPodResourcesResponse)}, bucket)
        server.add_insecure_port(f"unix:{path}")
        await server.start()
        return server

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            made["server"] = loop.run_until_complete(make())
        except BaseException as e:  # (told to the caller, below)
            made["error"] = e
            return
        finally:
            ready.set()
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    ready = threading.Event()
    thread = threading.Thread(target=run, name="podresources-loop", daemon=True)
    thread.start()
    ready.wait()
    if "error" in made:
        thread.join()
        loop.close()
        pool.shutdown(wait=False)
        e = made["error"]
        if isinstance(e, RuntimeError):
            raise InputError(f"cannot listen: {e}", file=str(path)) from None
        raise e
    return UnixServer(loop, made["server"], thread, pool)


def check_socket_path(path: Path) -> None:
    """``InputError`` for a path longer than a unix socket address holds
    (the server cannot bind it; a client's gRPC would print its own lines
    of internals, then fail)."""
    size = len(os.fsencode(path))
    if size > MAX_SOCKET_PATH:
        raise InputError(f"socket path is {size} bytes, longer than the {MAX_SOCKET_PATH} a unix socket "
                         "address holds (give a shorter path, e.g. a relative one)", file=str(path))


def _answers(path: Path) -> bool:
    """Whether a server accepts connections on the unix socket ``path``."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(os.fspath(path))
        except OSError:
            return False
        return True


def serve_unix(
    socket_path: str | os.PathLike[str],
    provider: PodResourcesProvider,
    *,
    bucket: TokenBucket | None = None,
    on_request: RequestHook | None = None,
    max_workers: int = 4,
) -> UnixServer:
    """Start serving on the unix socket ``socket_path`` (its directory is
    created, mode 0750 as the kubelet's; a stale socket is replaced) and
    return the started server (``server.stop(grace)`` ends it). The
    handlers run on ``max_workers`` threads.

    Unlike the kubelet, whose ``CreateListener`` (k8s.io/cri-client
    ``pkg/util/util_unix.go``) unlinks whatever is at the path, a path that
    is not a socket, or a socket a server answers on, is refused
    (``InputError``): the agent may run beside a kubelet, or another agent,
    whose socket it must not take over."""
    path = Path(socket_path)
    check_socket_path(path)
    try:
        path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
    except OSError as e:  # (a file in the way, a directory that cannot be made)
        raise InputError(f"cannot make its directory: {e.strerror or e}", file=str(path)) from None
    if path.is_socket():
        if _answers(path):  # another server's: not taken over (its clients would lose it)
            raise InputError("another server is listening on this socket", file=str(path))
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a stale one, as the kubelet replaces it
    elif path.exists() or path.is_symlink():
        raise InputError("exists and is not a socket", file=str(path))
    return _start(path, provider, bucket or TokenBucket(), on_request, max_workers)

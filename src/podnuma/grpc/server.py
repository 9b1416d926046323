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

Calls are answered as grpc-go's server (``server.go``, v1.82) answers them:
a unary method reads one request message and answers at once; a call whose
request stream ends before any message gets ``Unknown`` ``EOF`` (the
reader's end-of-stream error, converted to a status), messages after the
first are not read; an unknown service or method gets ``Unimplemented``
``unknown service S`` / ``unknown method M for service S``, a path that is
not ``/SERVICE/METHOD`` ``malformed method name: "PATH"``. The methods are
registered as client-streaming ones behind one handler for every path, so
that each of these cases is seen and answered here.

The server is gRPC's asyncio one (``grpc.aio``), its loop on a thread of
its own, the handlers' work on a few threads: a call waits for its request
on the loop, not on a handler's thread, so clients that open calls and never
send them hold no thread and keep no other client waiting (the kubelet's
grpc-go server gives each call a goroutine; a thread-per-call server
with 4 threads was stopped by 4 such calls). Each connection is closed
after :data:`MAX_CONNECTION_AGE_S` (its calls given
:data:`MAX_CONNECTION_GRACE_S` more to end; a client reconnects at once,
gRPC's ``GOAWAY``), which bounds how long a call that is never sent is
kept; a connection carries at most :data:`MAX_STREAMS` calls at once; at
most :func:`connection_cap` connections are open at once (gRPC closes one
more at once: ``grpc.max_allowed_incoming_connections``), one that has
not sent its HTTP/2 preface within :data:`HANDSHAKE_TIMEOUT_S` is closed,
and so is one without a call open for :data:`MAX_CONNECTION_IDLE_S`: idle
connections cannot use up the agent's file descriptors, nor keep the
places under the cap for longer than that.

The socket is bound at a private name beside its path and then moved into
place (``link``, or ``rename`` over a stale socket), so that a socket file
another server has at the path is never removed by gRPC's own binding;
stopping removes the path only while it is still the socket bound here.
Before gRPC binds, :func:`check_unix` makes every check it can without
binding (a plain socket bound at a private name tells whether the directory
takes one): a refusal names the path given and the cause, and gRPC's own
log lines about a failed bind are not printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import resource
import secrets
import socket
import stat
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any, Protocol

from google.protobuf.message import DecodeError

import grpc
from podnuma.cm.podresources_view import AllocatableResources, PodResources
from podnuma.errors import InputError
from podnuma.golang.strconv import go_quote
from podnuma.grpc.convert import allocatable_message, pod_resources_message
from podnuma.grpc.podresources.v1 import api_pb2 as pb
from podnuma.grpc.podresources.v1alpha1 import api_pb2 as alpha_pb
from podnuma.grpc.provider import PodDevices
from podnuma.grpc.ratelimit import LIMIT_EXCEEDED_MESSAGE, TokenBucket
from podnuma.grpc.wire import WireError, read_strings

__all__ = [
    "MAX_REQUEST_BYTES",
    "RpcStatus",
    "UnixServer",
    "PodResourcesProvider",
    "PodResourcesServicer",
    "check_socket_path",
    "check_unix",
    "connection_cap",
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
#: connections open at once, at most (and at most a quarter of the
#: process's file descriptor limit, :func:`connection_cap`)
MAX_CONNECTIONS = 128
#: a connection that has not sent its HTTP/2 preface this long is closed
HANDSHAKE_TIMEOUT_S = 10
#: a connection with no call open this long is closed (``GOAWAY``: a gRPC
#: client reconnects on its next call), so that connections held open and
#: idle give their place under :data:`MAX_CONNECTIONS` back within seconds
MAX_CONNECTION_IDLE_S = 5
MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes with the terminating NUL

RequestHook = Callable[[str, bool], None]


class PodResourcesProvider(Protocol):
    """What the server lists (the kubelet's pods, CPU, memory and device
    providers, in one)."""

    def list_pod_resources(self) -> Sequence[PodResources]: ...

    def get_pod_resources(self, namespace: str, name: str) -> PodResources | None: ...

    def allocatable_resources(self) -> AllocatableResources: ...

    def list_all_pod_devices(self) -> Sequence[PodDevices]: ...


class RpcStatus(Exception):
    """A call's failure: its status code and message (what a handler
    returns as an error, the kubelet's ``status.Error`` or plain error)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


def not_found_message(namespace: str, name: str) -> str:
    """The kubelet's ``Get`` error for a pod it does not know."""
    return f"pod {name} in namespace {namespace} not found"


class PodResourcesServicer:
    """The three v1 methods over a provider. ``on_request(method, failed)``
    is called once per call (the kubelet counts requests and errors). A
    failure raises :class:`RpcStatus`."""

    def __init__(self, provider: PodResourcesProvider, on_request: RequestHook | None = None) -> None:
        self._provider = provider
        self._on_request = on_request

    def _count(self, method: str, failed: bool = False) -> None:
        if self._on_request is not None:
            self._on_request(method, failed)

    def List(self, request: pb.ListPodResourcesRequest) -> pb.ListPodResourcesResponse:
        self._count("list")
        pods = self._provider.list_pod_resources()
        return pb.ListPodResourcesResponse(pod_resources=[pod_resources_message(p) for p in pods])

    def Get(self, request: pb.GetPodResourcesRequest) -> pb.GetPodResourcesResponse:
        found = self._provider.get_pod_resources(request.pod_namespace, request.pod_name)
        if found is None:
            self._count("get", failed=True)
            raise RpcStatus(
                grpc.StatusCode.UNKNOWN, not_found_message(request.pod_namespace, request.pod_name)
            )
        self._count("get")
        return pb.GetPodResourcesResponse(pod_resources=pod_resources_message(found))

    def GetAllocatableResources(
        self, request: pb.AllocatableResourcesRequest
    ) -> pb.AllocatableResourcesResponse:
        self._count("get_allocatable")
        return allocatable_message(self._provider.allocatable_resources())


class V1alpha1Servicer:
    """The legacy ``v1alpha1`` ``List`` (``server_v1alpha1.go``): every pod
    the node knows, app containers only, devices only."""

    def __init__(self, provider: PodResourcesProvider, on_request: RequestHook | None = None) -> None:
        self._provider = provider
        self._on_request = on_request

    def List(self, request: alpha_pb.ListPodResourcesRequest) -> alpha_pb.ListPodResourcesResponse:
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


Handler = Callable[[Any, "grpc.aio.ServicerContext[Any, Any]"], Awaitable[Any]]


class _Routes(grpc.GenericRpcHandler):
    """Every call's handler, by its path, as grpc-go's server finds it
    (``handleStream``): the service is what lies between the leading ``/``
    and the last ``/``, the method what follows; a path it cannot split, an
    unknown service, an unknown method of a known one are each answered
    ``Unimplemented`` with grpc-go's text, without reading the request."""

    def __init__(self) -> None:
        self._services: dict[str, dict[str, grpc.RpcMethodHandler[Any, Any]]] = {}

    def add(self, service: str, method: str, handle: Handler, response_serializer: Any) -> None:
        self._services.setdefault(service, {})[method] = grpc.stream_unary_rpc_method_handler(
            handle, request_deserializer=None, response_serializer=response_serializer
        )

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any]:
        path = handler_call_details.method
        if not path.startswith("/") or "/" not in path[1:]:
            return _refusing(f"malformed method name: {go_quote(path)}")
        service, _, method = path[1:].rpartition("/")
        methods = self._services.get(service)
        if methods is None:
            return _refusing(f"unknown service {service}")
        found = methods.get(method)
        if found is None:
            return _refusing(f"unknown method {method} for service {service}")
        return found


def _refusing(details: str) -> grpc.RpcMethodHandler[Any, Any]:
    async def refuse(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, details)

    return grpc.stream_unary_rpc_method_handler(refuse)


def _string_fields(request: Any) -> dict[int, str] | None:
    """A request message's fields by number, when every one is a singular
    string (:func:`podnuma.grpc.wire.read_strings` reads it); else ``None``."""
    out: dict[int, str] = {}
    for f in request.DESCRIPTOR.fields:
        if f.type != f.TYPE_STRING or f.is_repeated:
            return None
        out[f.number] = f.name
    return out


def _unary(fn: Callable[[Any], Any], request: Any, bucket: TokenBucket,
           pool: futures.Executor) -> Handler:
    """A unary method's handler, as grpc-go's ``processUnaryRPC`` runs it:
    one request message read (none before the stream's end: ``Unknown``
    ``EOF``; any after it are not read), decoded (one that does not decode
    fails with ``INTERNAL``, "grpc: error unmarshalling request: ...", with
    protobuf-go's text: :mod:`podnuma.grpc.wire` reads a message of string
    fields as protobuf-go does, Python's protobuf any other),
    then the kubelet's rate limit (``LimiterUnaryServerInterceptor``: one
    token a call, none spent on a call without a request, on a request that
    did not decode nor on an unknown method), then ``fn`` on one of the
    server's threads (it takes the node's lock: never on the loop)."""

    strings = _string_fields(request)

    async def handle(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        raw = await context.read()
        if raw is grpc.aio.EOF:
            await context.abort(grpc.StatusCode.UNKNOWN, "EOF")
        try:
            message = request(**read_strings(raw, strings)) if strings is not None else request.FromString(raw)
        except (WireError, DecodeError) as e:
            await context.abort(grpc.StatusCode.INTERNAL, f"grpc: error unmarshalling request: {e}")
        if not bucket.allow():
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, LIMIT_EXCEEDED_MESSAGE)
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn, message)
        except RpcStatus as e:
            await context.abort(e.code, e.details)

    return handle


class UnixServer:
    """A started PodResources server: ``stop(grace)`` ends it (the calls
    under way given ``grace`` seconds, ``None``: none, and then it has
    ended when ``stop`` returns) and returns an event set once it has
    ended, as ``grpc.Server.stop`` does. Its socket file is removed when
    the stop begins, if the path still names the socket bound here."""

    def __init__(self, loop: asyncio.AbstractEventLoop, server: grpc.aio.Server,
                 thread: threading.Thread, pool: futures.ThreadPoolExecutor,
                 path: Path, bound: tuple[int, int]) -> None:
        self._loop = loop
        self._server = server
        self._thread = thread
        self._pool = pool
        self._path = path
        self._bound = bound
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._stopping = False

    @property
    def path(self) -> Path:
        return self._path

    def stop(self, grace: float | None) -> threading.Event:
        with self._lock:
            if self._stopping:
                return self._stopped
            self._stopping = True
        _remove_if_bound(self._path, self._bound)
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


def connection_cap() -> int:
    """The connections the server keeps open at once: :data:`MAX_CONNECTIONS`,
    and no more than a quarter of the soft ``RLIMIT_NOFILE`` (the agent's
    watcher, manifests and checkpoints need descriptors too)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return MAX_CONNECTIONS
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(1, min(MAX_CONNECTIONS, soft // 4))


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _remove_if_bound(path: Path, bound: tuple[int, int]) -> None:
    """Unlink ``path`` if it is still the socket file bound here (another
    server may have bound the path since)."""
    try:
        if _identity(os.lstat(path)) == bound:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _private_name(path: Path) -> Path:
    """A name for binding first, beside ``path``: hidden, random, fitting a
    unix socket address (``InputError`` when there is no room for one)."""
    room = MAX_SOCKET_PATH - len(os.fsencode(path.parent / "x")) + 1  # (bytes for the name)
    length = min(16, room - 1)  # ("." + random)
    if length < 6:
        raise InputError(
            f"socket path leaves no room for the temporary name it is bound at first (the directory's "
            f"path must be at most {MAX_SOCKET_PATH - 8} bytes)", file=str(path))
    return path.parent / ("." + secrets.token_hex(8)[:length])


def _place(private: Path, path: Path, stale: tuple[int, int] | None) -> None:
    """Move the socket bound at ``private`` to ``path``: where nothing was,
    a hard link (refused if something appeared meanwhile); over the stale
    socket ``stale``, a rename (only if it is still that one)."""
    try:
        if stale is None:
            try:
                os.link(private, path)
            except FileExistsError:
                raise InputError("another server created this socket meanwhile", file=str(path)) from None
            except OSError as e:
                if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
                    raise
                # (a file system without hard links)
                if os.path.lexists(path):
                    raise InputError("another server created this socket meanwhile", file=str(path)) from None
                os.rename(private, path)
        else:
            try:
                now = _identity(os.lstat(path))
            except FileNotFoundError:
                now = None
            if now is not None and now != stale:
                raise InputError("another server replaced this stale socket meanwhile", file=str(path))
            os.rename(private, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(private)


def _start(path: Path, provider: PodResourcesProvider, bucket: TokenBucket,
           on_request: RequestHook | None, max_workers: int,
           stale: tuple[int, int] | None) -> UnixServer:
    """The server made, bound at a private name, started on a loop of its
    own thread, and its socket moved to ``path``."""
    loop = asyncio.new_event_loop()
    pool = futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="podresources")
    made: dict[str, Any] = {}
    private = _private_name(path)

    async def make() -> grpc.aio.Server:
        server = grpc.aio.server(
            migration_thread_pool=pool,
            options=[
                ("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
                ("grpc.max_connection_age_ms", MAX_CONNECTION_AGE_S * 1000),
                ("grpc.max_connection_age_grace_ms", MAX_CONNECTION_GRACE_S * 1000),
                ("grpc.max_concurrent_streams", MAX_STREAMS),
                ("grpc.max_allowed_incoming_connections", connection_cap()),
                ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_S * 1000),
                ("grpc.max_connection_idle_ms", MAX_CONNECTION_IDLE_S * 1000),
            ],
        )
        # The kubelet registers the legacy v1alpha1 service first, then v1.
        alpha = V1alpha1Servicer(provider, on_request)
        v1 = PodResourcesServicer(provider, on_request)
        routes = _Routes()
        for service, method, fn, request, response in (
            ("v1alpha1.PodResourcesLister", "List", alpha.List, alpha_pb.ListPodResourcesRequest,
             alpha_pb.ListPodResourcesResponse),
            ("v1.PodResourcesLister", "List", v1.List, pb.ListPodResourcesRequest, pb.ListPodResourcesResponse),
            ("v1.PodResourcesLister", "GetAllocatableResources", v1.GetAllocatableResources,
             pb.AllocatableResourcesRequest, pb.AllocatableResourcesResponse),
            ("v1.PodResourcesLister", "Get", v1.Get, pb.GetPodResourcesRequest, pb.GetPodResourcesResponse),
        ):
            routes.add(service, method, _unary(fn, request, bucket, pool), response.SerializeToString)
        server.add_generic_rpc_handlers((routes,))
        server.add_insecure_port(f"unix:{private}")
        await server.start()
        try:
            made["bound"] = _identity(os.lstat(private))
            _place(private, path, stale)
        except BaseException:
            await server.stop(None)
            raise
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
        with contextlib.suppress(FileNotFoundError):
            os.unlink(private)
        e = made["error"]
        if isinstance(e, RuntimeError):  # (gRPC's bind failed: its message names only its address)
            refused = _bind_refused(path)
            why = str(e) if refused is None else str(refused.strerror or refused)
            raise InputError(f"cannot listen: {why}", file=str(path)) from None
        if isinstance(e, OSError):
            raise InputError(f"cannot put the socket in place: {e.strerror or e}", file=str(path)) from None
        raise e
    return UnixServer(loop, made["server"], thread, pool, path, made["bound"])


def check_socket_path(path: Path) -> None:
    """``InputError`` for a path longer than a unix socket address holds
    (the server cannot bind it; a client's gRPC would print its own lines
    of internals, then fail)."""
    size = len(os.fsencode(path))
    if size > MAX_SOCKET_PATH:
        raise InputError(f"socket path is {size} bytes, longer than the {MAX_SOCKET_PATH} a unix socket "
                         "address holds (give a shorter path, e.g. a relative one)", file=str(path))


def _listening(path: Path) -> bool | None:
    """Whether a server listens on the unix socket ``path``: ``False``
    only when a connection is refused (``ECONNREFUSED``: no socket is
    bound to the file, a stale one), ``None`` when the file is gone; a
    server whose queue of connections is full (``EAGAIN``), or one that
    does not accept in time, is listening. Other errors are told
    (``InputError``): what is there is not taken over blindly."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(os.fspath(path))
        except ConnectionRefusedError:
            return False
        except FileNotFoundError:
            return None
        except (BlockingIOError, TimeoutError):
            return True
        except OSError as e:
            raise InputError(
                f"cannot tell whether a server listens on this socket: {e.strerror or e}", file=str(path)
            ) from None
        return True


def _unreachable(e: OSError) -> str:
    if e.errno == errno.EACCES:
        return f"{e.strerror} (a directory on the way cannot be searched)"
    return str(e.strerror or e)


def _not_a_directory(directory: Path) -> Path | None:
    """The first of ``directory`` and the directories above it (outermost
    first) that exists and is not a directory, if any."""
    for p in [*reversed(directory.parents), directory]:
        try:
            st = os.stat(p)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return p
    return None


def _make_directory(path: Path) -> None:
    """The socket's directory, made if needed (mode 0750, as the kubelet's)."""
    try:
        path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
    except OSError as e:
        if e.errno in (errno.EEXIST, errno.ENOTDIR):
            blocker = _not_a_directory(path.parent)
            if blocker is not None:
                raise InputError(f"cannot make its directory: {blocker} is not a directory",
                                 file=str(path)) from None
        raise InputError(f"cannot make its directory: {e.strerror or e}", file=str(path)) from None


def _bind_refused(path: Path) -> OSError | None:
    """Why a unix socket cannot be bound beside ``path`` (a plain socket
    bound at a private name there, then removed), ``None`` when it can:
    the cause in the system's words, where gRPC's own failure names only
    its address."""
    private = _private_name(path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(os.fspath(private))
        except OSError as e:
            return e
        with contextlib.suppress(OSError):
            os.unlink(private)
    return None


def check_unix(socket_path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """Every check :func:`serve_unix` makes before it binds, without
    binding: ``InputError`` for a path too long, a directory that cannot be
    made or searched, something not a socket at the path, a socket a
    server listens on, a directory a socket cannot be bound in (the cause
    in the system's words). Returns the identity of a stale socket at the
    path (replaced when serving), ``None`` when there is none. The agent
    calls it before it restores its state: a start refused for its socket
    changes nothing."""
    path = Path(socket_path)
    check_socket_path(path)
    _make_directory(path)
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise InputError(f"cannot reach it: {_unreachable(e)}", file=str(path)) from None
    stale: tuple[int, int] | None = None
    if st is not None:
        if not stat.S_ISSOCK(st.st_mode):
            raise InputError("exists and is not a socket", file=str(path))
        listening = _listening(path)
        if listening:  # another server's: not taken over (its clients would lose it)
            raise InputError("another server is listening on this socket", file=str(path))
        if listening is False:
            stale = _identity(st)  # a stale one, replaced as the kubelet replaces it
    refused = _bind_refused(path)
    if refused is not None:
        raise InputError(f"cannot listen: {refused.strerror or refused}", file=str(path))
    return stale


def serve_unix(
    socket_path: str | os.PathLike[str],
    provider: PodResourcesProvider,
    *,
    bucket: TokenBucket | None = None,
    on_request: RequestHook | None = None,
    max_workers: int = 4,
) -> UnixServer:
    """Start serving on the unix socket ``socket_path`` (its directory is
    created, mode 0750 as the kubelet's; a stale socket, one that refuses
    connections, is replaced) and return the started server
    (``server.stop(grace)`` ends it). The handlers run on ``max_workers``
    threads.

    Unlike the kubelet, whose ``CreateListener`` (k8s.io/cri-client
    ``pkg/util/util_unix.go``) unlinks whatever is at the path, a path that
    is not a socket, or a socket a server answers on, is refused
    (``InputError``, :func:`check_unix`): the agent may run beside a
    kubelet, or another agent, whose socket it must not take over."""
    path = Path(socket_path)
    stale = check_unix(path)
    return _start(path, provider, bucket or TokenBucket(), on_request, max_workers, stale)

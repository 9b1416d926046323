"""Prometheus metrics of the agent (prometheus-client, its own registry).

* ``podnuma_agent_admissions_total{result,reason}``: admission decisions;
  ``result`` is ``admitted`` or ``rejected``, ``reason`` the kubelet's
  rejection reason (``TopologyAffinityError``, ``OutOfcpu``...; empty when
  admitted);
* ``podnuma_agent_admission_duration_seconds``: time to decide one pod;
* ``podnuma_agent_exclusive_cpus``: CPUs held exclusively (container and
  pod-level sets), ``podnuma_agent_pod_shared_pools`` and
  ``podnuma_agent_pod_shared_pool_cpus``: pods with a pod shared pool and
  the CPUs in those pools;
* ``podnuma_agent_pods{state}``: static pods by state (admitted, rejected)
  and ``podnuma_agent_manifest_errors``: manifests skipped as malformed;
* ``podnuma_agent_pod_resources_endpoint_requests_total{method,failed}``:
  PodResources calls, as the kubelet counts them.

Served on an opt-in port, bound to loopback, by a server of bounded
means: at most :data:`MAX_CONNECTIONS` connections at once (one more is
closed at once); a connection whose request head (request line and
headers) is not complete :data:`IDLE_TIMEOUT_S` seconds after it was
accepted is closed, however its bytes trickle in (the time is a deadline
for the whole head, not a wait per read), and the answer must be taken
within the same time; one request per connection. A client that opens
connections and sends nothing, or sends a byte now and then, cannot use up
the agent's threads or file descriptors, which its watcher needs too. The
listen backlog is :data:`LISTEN_BACKLOG` (Python's default is 5: a burst
of connections would leave a scrape's connection unanswered by the kernel).
"""

from __future__ import annotations

import io
import socket
import sys
import threading
import time
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app

from podnuma.cm.container_manager import Node

__all__ = ["AgentMetrics", "IDLE_TIMEOUT_S", "LISTEN_BACKLOG", "MAX_CONNECTIONS", "MetricsServer"]

#: connections served at once
MAX_CONNECTIONS = 16
#: a connection's request head must be complete this long after the
#: connection was accepted (and its answer taken within as long)
IDLE_TIMEOUT_S = 5.0
#: connections the kernel queues before they are accepted
LISTEN_BACKLOG = 128


class _DeadlineReader(io.RawIOBase):
    """The connection's bytes, each read given only the time left before
    ``deadline`` (``TimeoutError`` once it has passed); the socket's own
    timeout is put back after each read (the answer's writes use it)."""

    def __init__(self, sock: socket.socket, deadline: float, timeout: float) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline
        self._timeout = timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("request not complete in time")
        self._sock.settimeout(left)
        try:
            return self._sock.recv_into(buffer)
        finally:
            self._sock.settimeout(self._timeout)


class _Handler(WSGIRequestHandler):
    # the deadline for the request head from the connection's start, and
    # the socket's timeout (a write of the answer gives up after it)
    timeout = IDLE_TIMEOUT_S

    def setup(self) -> None:
        super().setup()  # (the socket's timeout set to ``timeout``)
        limit = float(self.timeout or IDLE_TIMEOUT_S)
        self.rfile.close()  # (the plain reader ``setup`` made, replaced)
        self.rfile = io.BufferedReader(
            _DeadlineReader(self.connection, time.monotonic() + limit, limit)
        )

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        pass  # (no line per scrape)


class MetricsServer(ThreadingMixIn, WSGIServer):
    """The metrics' HTTP server: a thread per connection, at most
    :data:`MAX_CONNECTIONS` of them."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # (full: closed at once)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # (a client too slow, gone, or reset: closed, not logged)
        super().handle_error(request, client_address)


class AgentMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.admissions = Counter(
            "podnuma_agent_admissions", "Admission decisions.", ["result", "reason"], registry=r
        )
        self.admission_seconds = Histogram(
            "podnuma_agent_admission_duration_seconds",
            "Time to decide the admission of one pod.",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
            registry=r,
        )
        self.exclusive_cpus = Gauge(
            "podnuma_agent_exclusive_cpus", "CPUs held exclusively by containers or pods.", registry=r
        )
        self.pod_shared_pools = Gauge(
            "podnuma_agent_pod_shared_pools", "Pods with a pod shared pool.", registry=r
        )
        self.pod_shared_pool_cpus = Gauge(
            "podnuma_agent_pod_shared_pool_cpus", "CPUs in pod shared pools.", registry=r
        )
        self.pods = Gauge("podnuma_agent_pods", "Static pods by state.", ["state"], registry=r)
        self.manifest_errors = Gauge(
            "podnuma_agent_manifest_errors", "Manifests skipped as malformed.", registry=r
        )
        self.manifests_skipped = Counter(
            "podnuma_agent_manifests_skipped",
            "Manifests skipped (each bad version of a file once): invalid (malformed, over "
            "a reading limit, not a valid pod) or duplicate (a pod name already used).",
            ["reason"],
            registry=r,
        )
        self.podresources_requests = Counter(
            "podnuma_agent_pod_resources_endpoint_requests",
            "PodResources API calls.",
            ["method", "failed"],
            registry=r,
        )

    def on_podresources_request(self, method: str, failed: bool) -> None:
        self.podresources_requests.labels(method, "true" if failed else "false").inc()

    def observe_node(self, node: Node) -> None:
        """Refresh the gauges from the node's CPU state. A pod's shared pool
        is what PodResources consumers compute: the pod's CPU ids minus its
        containers' own."""
        state = node.cpu.state
        exclusive: set[int] = set()
        for containers in state.get_cpu_assignments().values():
            for cpus in containers.values():
                exclusive.update(cpus.list())
        for pod_cpus in state.pod_assignments.values():
            exclusive.update(pod_cpus.list())
        pools = 0
        pool_cpus = 0
        for entry in node.pod_resources():
            pool = set(entry.cpu_ids.list())
            for c in entry.containers:
                pool -= set(c.cpu_ids.list())
            if pool:
                pools += 1
                pool_cpus += len(pool)
        self.exclusive_cpus.set(len(exclusive))
        self.pod_shared_pools.set(pools)
        self.pod_shared_pool_cpus.set(pool_cpus)

    def bind(self, port: int, address: str = "127.0.0.1") -> MetricsServer:
        """The server of ``/metrics``, listening on ``address:port`` (0: a
        free port, see its ``server_port``), not serving yet."""
        family = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)[0][0]

        class Server(MetricsServer):
            address_family = family

        return make_server(address, port, make_wsgi_app(self.registry), Server, handler_class=_Handler)

    def serve(self, port: int, address: str = "127.0.0.1") -> MetricsServer:
        """Serve ``/metrics`` on ``address:port`` (:meth:`bind`) from a
        thread; ``shutdown()`` ends it."""
        httpd = self.bind(port, address)
        threading.Thread(target=httpd.serve_forever, name="metrics", daemon=True).start()
        return httpd

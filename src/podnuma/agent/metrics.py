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

Served on an opt-in port, bound to loopback.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from podnuma.cm.container_manager import Node

__all__ = ["AgentMetrics"]


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

    def serve(self, port: int, address: str = "127.0.0.1") -> object:
        server, _thread = start_http_server(port, addr=address, registry=self.registry)
        return server

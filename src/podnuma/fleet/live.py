"""Reading a live cluster, read-only, through the official Kubernetes client.

With a kubeconfig, ``podnuma fleet analyze --kubeconfig FILE`` lists what
the dumps would hold: nodes and pods (``list`` on both, pods in all
namespaces, in pages of 500 as kubectl does), NodeResourceTopology objects
(``list`` on ``noderesourcetopologies.topology.node.k8s.io``; a cluster
without the CRD has none) and each node's configz
(``GET /api/v1/nodes/NODE/proxy/configz``, which needs ``get`` on
``nodes/proxy``: a node whose configz cannot be read falls back to the node
groups of a FleetConfig given beside it, and says so). Responses are read
as the API's JSON, exactly as ``kubectl get -o json`` shows it, and go
through the same assembly as the dumps (:mod:`podnuma.fleet.inputs`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from podnuma.errors import InputError
from podnuma.fleet.inputs import FleetInputs, Scan, assemble, walk_inputs, with_inline_pods
from podnuma.fleet.model import Issue
from podnuma.inputs.documents import load_json
from podnuma.inputs.limits import FLEET_LIMITS

__all__ = ["load_live", "PAGE"]

PAGE = 500
LIVE = "<live cluster>"


def _answer(resp: Any, what: str) -> Any:
    """An API answer's JSON, read through the one bounded path (at most the
    fleet byte limit is read)."""
    limit = FLEET_LIMITS.max_bytes
    read = getattr(resp, "read", None)
    data = read(limit + 1) if callable(read) else resp.data
    return load_json(data, name=what, limits=FLEET_LIMITS)


def _pages(call: Callable[..., Any], what: str = LIVE, **kw: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        args = dict(kw, limit=PAGE, _preload_content=False)
        if token:
            args["_continue"] = token
        resp = call(**args)
        doc = _answer(resp, what)
        if not isinstance(doc, dict):
            raise InputError("the API server's answer is not a JSON object", file=what)
        items.extend(doc.get("items") or [])
        token = (doc.get("metadata") or {}).get("continue")
        if not token:
            return items


def _why(e: Any) -> str:
    """An API error as ``CODE Reason: the server's message`` (the Status
    object's message, e.g. RBAC's 'pods is forbidden: User "x" cannot list
    resource "pods" ...')."""
    text = f"{e.status} {e.reason}"
    try:
        doc = json.loads(e.body or b"")
    except (TypeError, ValueError):
        return text
    msg = doc.get("message") if isinstance(doc, dict) else None
    return f"{text}: {msg}" if isinstance(msg, str) and msg else text


def load_live(kubeconfig: str, *, context: str | None = None, extra: Sequence[Path] = ()) -> FleetInputs:
    """The fleet as the cluster behind ``kubeconfig`` runs it; ``extra``:
    more inputs (a FleetConfig, MachineInfo files...) read as dumps."""
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException

    try:
        api_client = config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, context=context
        )
    except Exception as e:  # the client's own errors for a bad kubeconfig
        raise InputError(f"cannot load the kubeconfig: {e}", file=kubeconfig) from None
    core = client.CoreV1Api(api_client)
    custom = client.CustomObjectsApi(api_client)
    scan = Scan()
    for p in extra:
        if not p.exists():
            raise InputError("no such file or directory", file=str(p))
        walk_inputs(p, scan)
    server = api_client.configuration.host
    try:
        nodes = _pages(core.list_node)
        pods = _pages(core.list_pod_for_all_namespaces)
    except ApiException as e:
        raise InputError(f"cannot list nodes and pods: {_why(e)}", file=server) from None
    except InputError:
        raise
    except Exception as e:  # connection refused, TLS...
        raise InputError(f"cannot reach the API server: {e}", file=server) from None
    for n in nodes:
        name = (n.get("metadata") or {}).get("name")
        if isinstance(name, str) and name:
            scan.nodes[name] = n
            scan.node_files[name] = LIVE
    try:
        nrts = _pages(custom.list_cluster_custom_object, group="topology.node.k8s.io",
                      version="v1alpha2", plural="noderesourcetopologies")
        for o in nrts:
            name = (o.get("metadata") or {}).get("name")
            if isinstance(name, str):
                scan.nrt[name] = (o, f"{LIVE} noderesourcetopologies")
                scan.nrt_paths.pop(name, None)  # (not where a file had one)
    except ApiException as e:
        if e.status != 404:
            scan.issues.append(Issue("warning", f"cannot list NodeResourceTopology objects: "
                                     f"{_why(e)}", file=server))
    for name in sorted(scan.nodes):
        if name in scan.configz:
            continue
        try:
            resp: Any = core.connect_get_node_proxy_with_path(name, "configz", _preload_content=False)
            doc = _answer(resp, f"{LIVE} /api/v1/nodes/{name}/proxy/configz")
            cfg = doc.get("kubeletconfig") if isinstance(doc, dict) else None
            if isinstance(cfg, dict):
                scan.configz[name] = (cfg, f"{LIVE} /api/v1/nodes/{name}/proxy/configz")
        except ApiException as e:
            hint = ": needs get on nodes/proxy" if e.status in (401, 403) else ""
            scan.issues.append(Issue("warning", f"configz not readable ({_why(e)}){hint}",
                                     node=name, file=server))
        except InputError as e:
            scan.issues.append(Issue("warning", f"configz is not usable JSON: {e.message}",
                                     node=name, file=server))
    by_node: dict[str, list[dict[str, Any]]] = {}
    for pod in pods:
        scan.pods_total += 1
        node = (pod.get("spec") or {}).get("nodeName")
        if not isinstance(node, str) or not node:
            scan.unbound += 1
            continue
        pod.setdefault("kind", "Pod")
        pod.setdefault("apiVersion", "v1")
        by_node.setdefault(node, []).append(pod)
        scan.pod_index.setdefault(node, set()).add(LIVE)
        scan.pod_counts[node] = scan.pod_counts.get(node, 0) + 1
    fleet = assemble(scan)
    fleet.nodes = [replace(with_inline_pods(s, by_node.get(s.name, [])), pod_files=())
                   for s in fleet.nodes]
    return fleet

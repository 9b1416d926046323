"""The pods of a fleet: compacted to the fields the replay reads, indexed by
node, read again per node, in start order."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from podnuma.api.quantity import QuantityError, quantity_from_manifest
from podnuma.api.resources import is_supported_pod_level_resource
from podnuma.errors import InputError
from podnuma.fleet.dumpfile import CHANGED, read_dump
from podnuma.fleet.files import _is_map, left_out, read_items
from podnuma.fleet.model import Issue
from podnuma.golang.rfc3339 import format_utc, instant

__all__ = ["ACTIVE_PHASES", "compact_pod", "with_allocation", "is_pod", "start_key", "start_order", "read_node_pods", "with_ranged_pods"]

ACTIVE_PHASES = ("Running", "Pending", "Unknown")


def _meta(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    m = doc.get("metadata")
    return m if _is_map(m) else {}


#: the fields of v1.37.2's ``ResourceRequirements`` (a container's
#: ``resources``); another is a newer API server's, which Go's decoder skips
_RESOURCE_FIELDS = ("limits", "requests", "claims")


def _container_compact(c: Any) -> Any:
    if not _is_map(c):
        return c
    out = {k: c[k] for k in ("name", "resources", "restartPolicy") if k in c}
    r = out.get("resources")
    if _is_map(r) and any(k not in _RESOURCE_FIELDS for k in r):
        out["resources"] = {k: r[k] for k in _RESOURCE_FIELDS if k in r}
    return out


def _requests_of(resources: Any) -> Any:
    r = resources.get("requests") if _is_map(resources) else None
    return r if r is not None else {}


def with_allocation(spec: Mapping[str, Any], status: Any) -> dict[str, Any] | None:
    """The compact ``spec`` with each container's resources as the kubelet
    allocated them, where the dump's ``status`` shows an allocation other
    than the spec (``None``: none does). A running pod's spec can ask more
    (or less) than the kubelet allocated: a resize it deferred or found
    infeasible (``PodResizePending``; the static CPU manager refuses to
    resize a container with exclusive CPUs). The kubelet admits and
    re-admits a pod with its allocated resources (v1.37.2
    pkg/kubelet/allocation's ``AddPod``, ``UpdatePodFromAllocation``);
    the API server shows them in ``status.containerStatuses[]`` (and
    ``initContainerStatuses[]``): ``allocatedResources``, the allocated
    requests, and ``resources``, the resources as applied, whose
    ``limits`` are taken (without them, a limit equal to its request in
    the spec follows the allocated request, as a resize keeps the QoS
    class; another stays the spec's). A container whose
    ``allocatedResources`` are its spec's requests is left as it is.

    A pod with pod-level resources (``spec.resources``) has its pod-level
    allocation applied too (:func:`_pod_level_allocation`)."""
    if not _is_map(status):
        return None
    out: dict[str, Any] | None = None
    pod_level = _pod_level_allocation(spec, status)
    if pod_level is not None:
        out = dict(spec)
        out["resources"] = pod_level
    for ck, sk in (("initContainers", "initContainerStatuses"), ("containers", "containerStatuses")):
        ctrs, sts = spec.get(ck), status.get(sk)
        if not isinstance(ctrs, list) or not isinstance(sts, list):
            continue
        alloc = {st["name"]: st for st in sts
                 if _is_map(st) and type(st.get("name")) is str and _is_map(st.get("allocatedResources"))}
        if not alloc:
            continue
        new: list[Any] | None = None
        for i, c in enumerate(ctrs):
            name = c.get("name") if _is_map(c) else None
            st = alloc.get(name) if type(name) is str else None
            if st is None:
                continue
            res = c.get("resources")
            res = res if _is_map(res) else {}
            requests = dict(st["allocatedResources"])
            spec_requests = _requests_of(res)
            if requests == spec_requests:
                continue
            want = dict(res)
            want["requests"] = requests
            applied = st.get("resources")
            limits = applied.get("limits") if _is_map(applied) else None
            if _is_map(limits):
                want["limits"] = dict(limits)
            elif _is_map(res.get("limits")) and _is_map(spec_requests):
                want["limits"] = {k: requests[k] if k in requests and spec_requests.get(k) == v else v
                                  for k, v in res["limits"].items()}
            if new is None:
                new = list(ctrs)
            new[i] = {**c, "resources": want}
        if new is not None:
            if out is None:
                out = dict(spec)
            out[ck] = new
    return out


def _minus_overhead(value: Any, overhead: Any) -> Any:
    """A pod-level quantity of the status (``value``, the overhead counted
    in) without the pod's ``overhead`` of that resource (``None``: none);
    ``value`` as it is when either does not parse (the replay then reads
    it, and words its error)."""
    if overhead is None:
        return value
    try:
        got = quantity_from_manifest(value) - quantity_from_manifest(overhead)
    except QuantityError:
        return value
    return got.canonical()


def _same_quantity(a: Any, b: Any) -> bool:
    try:
        return quantity_from_manifest(a) == quantity_from_manifest(b)
    except QuantityError:
        return bool(a == b)


def _pod_level_allocation(spec: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pod-level ``resources`` the kubelet allocated, where the pod's
    status shows others than ``spec.resources`` (``None``: it does not).
    With ``InPlacePodLevelResourcesVerticalScaling`` (beta, on by default
    in v1.37.2) the kubelet checkpoints a pod's ``spec.resources`` as
    admitted or resized, and admits the pod again with them (v1.37.2
    pkg/kubelet/allocation ``ResourceInfoForPod``,
    ``updatePodLevelResourcesFromAllocation``); it writes into the
    status ``allocatedResources``, the pod's requests as allocated
    (``PodRequests`` of the allocated pod: the pod-level request of each
    resource set there, the pod's overhead added), and ``resources``, the
    pod-level resources as applied, whose limits (read from the pod's
    cgroup, the overhead added) are taken. The allocated request of each
    resource the spec asks at pod level is the status's less the
    overhead; a limit without an applied value (or one below the allocated
    request: applied before the allocation) follows the allocated request
    where the spec's limit equals its request (a resize keeps the QoS
    class), and stays the spec's otherwise."""
    res = spec.get("resources")
    alloc = status.get("allocatedResources")
    if not _is_map(res) or not _is_map(alloc):
        return None
    spec_requests = res.get("requests")
    if not _is_map(spec_requests):
        return None
    over = spec.get("overhead")
    over = over if _is_map(over) else {}
    requests = dict(spec_requests)
    changed = False
    for k, v in spec_requests.items():
        if not is_supported_pod_level_resource(k) or k not in alloc:
            continue
        got = _minus_overhead(alloc[k], over.get(k))
        if not _same_quantity(got, v):
            requests[k] = got
            changed = True
    if not changed:
        return None
    want = dict(res)
    want["requests"] = requests
    spec_limits = res.get("limits")
    if _is_map(spec_limits):
        applied = status.get("resources")
        applied_limits = applied.get("limits") if _is_map(applied) else None
        applied_limits = applied_limits if _is_map(applied_limits) else {}
        limits = dict(spec_limits)
        for k, v in spec_limits.items():
            if not is_supported_pod_level_resource(k):
                continue
            got = _minus_overhead(applied_limits[k], over.get(k)) if k in applied_limits else None
            if got is not None and not _below(got, requests.get(k)):
                limits[k] = got
            elif k in spec_requests and _same_quantity(spec_requests[k], v):
                limits[k] = requests[k]
        want["limits"] = limits
    return want


def _below(limit: Any, request: Any) -> bool:
    """Whether an applied ``limit`` is below the allocated ``request``: a
    resize allocated but not yet applied beside another pending (the
    cgroup's limit is an older one than the allocation's), not taken."""
    if request is None:
        return False
    try:
        return bool(quantity_from_manifest(limit) < quantity_from_manifest(request))
    except QuantityError:
        return False


def compact_pod(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a pod the replay reads (metadata that identifies it and
    its workload, the containers' names and resources, pod-level resources,
    overhead, the node and the start time); the rest is dropped."""
    meta = _meta(doc)
    spec = doc.get("spec") if _is_map(doc.get("spec")) else {}
    status = doc.get("status") if _is_map(doc.get("status")) else {}
    assert _is_map(spec) and _is_map(status)
    out_meta = {
        k: meta[k]
        for k in ("name", "namespace", "uid", "labels", "annotations", "ownerReferences",
                  "creationTimestamp", "generateName")
        if k in meta
    }
    out_spec: dict[str, Any] = {}
    for k in ("nodeName", "resources", "overhead", "restartPolicy"):
        if k in spec:
            out_spec[k] = spec[k]
    for k in ("initContainers", "containers"):
        if k in spec:
            v = spec[k]
            out_spec[k] = [_container_compact(c) for c in v] if isinstance(v, list) else v
    out_spec = with_allocation(out_spec, status) or out_spec
    out_status = {k: status[k] for k in ("phase", "startTime", "qosClass") if k in status}
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": out_meta, "spec": out_spec}
    if out_status:
        out["status"] = out_status
    return out


def _node_name(doc: Any) -> str | None:
    if not _is_map(doc):
        return None
    spec = doc.get("spec")
    if not _is_map(spec):
        return None
    n = spec.get("nodeName")
    return n if type(n) is str and n else None  # (not a number read as its text)


def _phase(doc: Mapping[str, Any]) -> str:
    st = doc.get("status")
    if _is_map(st) and type(st.get("phase")) is str:
        return str(st["phase"])
    return "Running"  # a manifest without status: taken as running


def is_pod(doc: Any) -> bool:
    return _is_map(doc) and doc.get("kind") == "Pod"


#: an RFC 3339 time as the API server writes it (UTC, no fraction) that Go's
#: parse takes whatever its numbers (a day every month has): its first 19
#: characters are its place in time, as text (:func:`start_order`)
_UTC = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\dZ\Z", re.ASCII)


def start_order(text: str) -> str:
    """What a pod's start time (``status.startTime`` or
    ``metadata.creationTimestamp``, a string) sorts by: the moment it
    stands for (:func:`podnuma.golang.rfc3339.instant`), as its UTC date
    and time ``YYYY-MM-DDTHH:MM:SS`` and, when it has one, its fraction
    in nanoseconds (``.NNNNNNNNN``), so that the texts compare as their
    moments do: ``2026-01-01T10:00:00+02:00`` is ``2026-01-01T08:00:00``,
    before ``2026-01-01T09:00:00Z``, and ``...:05Z`` is before
    ``...:05.5Z``. A time moved past year 9999 by its offset sorts after
    every other, one before year 0 before them. A text Go's RFC 3339 parse
    refuses sorts as its text (the replay leaves that pod out, and says
    so). The API server's own text (UTC, no fraction) is taken as it is,
    without parsing it."""
    if len(text) == 20 and _UTC.match(text) is not None:
        return text[:19]
    got = instant(text)
    if got is None:
        return text
    seconds, nanos = got
    utc = format_utc(seconds)[:-1]
    if len(utc) > 19 and utc[0] != "-":  # (year 10000: after 9999 as text)
        utc = "~" + utc
    return f"{utc}.{nanos:09d}" if nanos else utc


def start_key(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    """Sort key of the kubelet's admission order: the pod's start time
    (``status.startTime``, else ``metadata.creationTimestamp``) as the
    moment it stands for (:func:`start_order`), then namespace/name."""
    meta = _meta(pod)
    st = pod.get("status")
    start = st.get("startTime") if _is_map(st) else None
    if not isinstance(start, str):
        start = meta.get("creationTimestamp")
    return (
        start_order(start) if isinstance(start, str) else "",
        str(meta.get("namespace") or "default"),
        str(meta.get("name") or ""),
    )


def read_node_pods(
    files: Iterable[str], nodes: Iterable[str], *, every_copy: bool = False
) -> tuple[dict[str, list[dict[str, Any]]], list[Issue]]:
    """The active pods of ``nodes`` found in ``files``, compacted, by node,
    in start order; with the issues of those files (once per file).
    ``every_copy``: a pod listed twice is there twice, in the order the
    files list them (the copies to compare: :mod:`podnuma.fleet.copies`). A file
    named by a :class:`~podnuma.fleet.dumpfile.DumpName` is read only as the
    version its index read (its identity while it is read the name's):
    another is a warning that it changed since it was indexed, and none of
    its pods."""
    want = set(nodes)
    out: dict[str, list[dict[str, Any]]] = {n: [] for n in want}
    issues: list[Issue] = []
    seen: set[tuple[str, str, str]] = set()
    for f in sorted(set(files)):
        data: bytes | None = None
        ident = getattr(f, "ident", None)
        if ident is not None:
            name = str(f)
            try:
                data, now = read_dump(Path(f), name)
            except InputError as e:
                issues.append(Issue("error", e.message, file=name))
                continue
            if now != ident:
                issues.append(Issue("warning", CHANGED, file=name))
                continue
        items, issue = read_items(Path(f), data)
        if issue is not None:
            issues.append(issue)
        for doc in items:
            if not is_pod(doc) or left_out(doc):  # (a damaged pod: the index said it, and left it out)
                continue
            node = _node_name(doc)
            if node in want and _phase(doc) in ACTIVE_PHASES:
                assert node is not None
                meta = _meta(doc)
                key = (str(meta.get("namespace") or "default"), str(meta.get("name")),
                       str(meta.get("uid") or ""))
                if key in seen and not every_copy:  # the same pod in two dumps
                    continue
                seen.add(key)
                out[node].append(compact_pod(doc))
    if not every_copy:
        for pods in out.values():
            pods.sort(key=start_key)
    return out, issues


def _key(doc: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = _meta(doc)
    return (str(meta.get("namespace") or "default"), str(meta.get("name")), str(meta.get("uid") or ""))


def _start_of(pod: Any) -> tuple[str, str, str]:
    got = getattr(pod, "start", None)  # a pod scanned from a range carries it
    return got if got is not None else start_key(pod)


def with_ranged_pods(node: str, pods: list[Any], items: Iterable[Any]) -> list[Any]:
    """``pods`` (compact, in start order) with the active pods of ``node``
    among ``items`` (compact pods read from its byte ranges, in file order,
    or :class:`~podnuma.fleet.podscan.ScannedPod` records of active pods,
    which carry their node, identity and start key) added, a pod already
    there (same namespace, name and uid) once; in start order."""
    seen = {_key(p) for p in pods}
    out = list(pods)
    for doc in items:
        key = getattr(doc, "ident", None)
        if key is not None:
            if doc.node != node:
                continue
        else:
            if not is_pod(doc) or _node_name(doc) != node or _phase(doc) not in ACTIVE_PHASES:
                continue
            key = _key(doc)
        if key in seen:  # the same pod in two dumps
            continue
        seen.add(key)
        out.append(doc)
    out.sort(key=_start_of)
    return out

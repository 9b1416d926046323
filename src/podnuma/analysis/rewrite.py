"""Rewriting a Pod between its per-container and its pod-level form (KEP-5526).

Pure functions on Pod manifests (plain mappings, as loaded from YAML/JSON)
and their parsed :class:`~podnuma.api.pod.Pod`. No I/O. Used by
``podnuma compare`` and ``podnuma advise``; the engine (``measure.py``)
then says what each form gets on a node.

Per-container -> pod-level (:func:`to_pod_level`):

* ``spec.resources`` = the pod's effective requests (the kubelet's
  ``PodRequests`` sidecar formula over the containers as written, no
  overhead) for ``cpu``, ``memory`` and every ``hugepages-*``; a limit for
  cpu/memory only when every container has one (as the API server would
  default it), hugepage limits = the aggregated hugepage limits.
* When the pod-level form is Guaranteed, a non-integer CPU budget is rounded
  up to whole CPUs (the kubelet pins no CPUs for a fractional pod budget).
* A container keeps its exclusive slice (its resources, as written) when it
  is Guaranteed-equivalent with a whole number of CPUs (>= 1) and is not a
  sidecar; the annotations below override that. Every other container loses
  its ``cpu``, ``memory`` and ``hugepages-*`` requests/limits (other
  resources, e.g. devices and ephemeral-storage, stay) and runs on the pod
  shared pool.
* Sidecars are recognised by the rules of ``podnuma.analysis.sidecars``:
  restartable init containers (``restartPolicy: Always``), the containers
  named by the user or by the annotation ``podnuma.io/sidecars: "a,b"``, and
  app containers injected by well-known injectors (istio, linkerd, ...).
* ``keep_limits``: a moved container keeps its own memory request and limit
  (its ``memory.max`` stays its own instead of becoming the pod budget).
  Its CPU request and limit cannot stay: with both memory and CPU
  requests == limits it would be exclusive again, and a CPU limit alone is
  defaulted into a request by the API server. Whatever a moved container
  loses is listed in its plan (:attr:`ContainerPlan.lost`).
* Overrides: ``podnuma.io/exclusive: "a,b"`` keeps those containers'
  resources; ``podnuma.io/exclusive.NAME: "true"|"false"`` keeps / moves
  container NAME.
* The kubelet rejects a pod-level pod whose exclusive containers take the
  whole budget of a resource while shared containers exist (``>=``). The
  rewrite then grows that budget (1 CPU, 1Mi of memory, one huge page) and
  says so.

Pod-level -> per-container (:func:`to_per_container`): ``spec.resources`` is
removed; containers that set a resource keep it; the rest of each budget
(budget minus the long-running containers that set it) is split evenly
among the app containers and sidecars that do not set it (CPU in
millicores, memory in bytes, huge pages in pages); a regular init container
without it gets the budget minus the sidecars declared before it. A
container that gets a share of a cpu or memory limit but none of the
request (nothing left of the requests budget) gets an explicit request of
0: a limit alone would be defaulted into an equal request by the API
server, turning a container that had no request into a Guaranteed one.

Both directions count as the kubelet does, in int64 (millicores for CPU,
bytes otherwise), and refuse a pod (``InputError`` with the field path)
whose quantities or budgets do not fit: the kubelet's counters wrap there,
and a form derived from wrapped values means nothing.
:func:`served_manifest` writes a manifest's quantities as the API server
stores them (what the kubelet receives for a pod created through it).
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from typing import Any, Literal

from podnuma.analysis.sidecars import ANNOTATION_SIDECARS, recognise_sidecars
from podnuma.api.pod import Container, Pod
from podnuma.api.pod_defaults import round_up_milli
from podnuma.api.pod_validation import resource_path
from podnuma.api.qos import is_container_equivalent_qos_guaranteed
from podnuma.api.quantity import (
    Quantity,
    QuantityError,
    int_text,
    parse_quantity,
    quantity_from_manifest,
)
from podnuma.api.resources import (
    aggregate_limits_of,
    aggregate_requests_of,
    is_hugepage_resource,
    is_supported_pod_level_resource,
)
from podnuma.errors import InputError

__all__ = [
    "ANNOTATION_EXCLUSIVE",
    "ANNOTATION_SIDECARS",
    "ContainerPlan",
    "Direction",
    "Rewrite",
    "has_pod_level_resources",
    "sidecar_names",
    "exclusive_override",
    "has_whole_cpus",
    "to_pod_level",
    "to_per_container",
    "other_form",
    "served_manifest",
]

ANNOTATION_EXCLUSIVE = "podnuma.io/exclusive"

Direction = Literal["podLevel", "perContainer"]
Role = Literal["exclusive", "shared"]

_MI = 1 << 20
#: the largest amount the kubelet counts (Go's int64)
_INT64_MAX = (1 << 63) - 1


#: the fields of :class:`ContainerPlan`, in order
_CONTAINERPLAN_FIELDS = (
    "name",
    "type",
    "role",
    "why",
    "sidecar_rule",
    "kept",
    "lost",
)


class ContainerPlan:
    """What the rewrite does with one container."""

    name: str
    type: str  # init / sidecar / app
    role: Role  # keeps its own resources, or runs on the (pod) shared pool
    why: str
    sidecar_rule: str | None  # the rule that recognised it as a sidecar
    kept: tuple[str, ...]  # own resources kept by a moved container (``limits.memory=256Mi``)
    lost: tuple[str, ...]  # own resources a moved container loses

    def __init__(
        self,
        name: str,
        type: str,
        role: Role,
        why: str,
        sidecar_rule: str | None = None,
        kept: tuple[str, ...] = (),
        lost: tuple[str, ...] | None = None,
    ) -> None:
        # written out, with the comparison, the hash, the repr and replace() (a
        # ``dataclass`` would make them when the module is imported, on every
        # command's start)
        self.name = name
        self.type = type
        self.role = role
        self.why = why
        self.sidecar_rule = sidecar_rule
        self.kept = kept
        self.lost = tuple() if lost is None else lost

    def _fields(self) -> tuple[Any, ...]:
        return (self.name, self.type, self.role, self.why, self.sidecar_rule, self.kept,
                self.lost)

    def __repr__(self) -> str:
        values = ", ".join(f"{n}={v!r}" for n, v in zip(_CONTAINERPLAN_FIELDS, self._fields(), strict=True))
        return f"{type(self).__qualname__}({values})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContainerPlan) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def replace(self, **changes: Any) -> ContainerPlan:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values: dict[str, Any] = dict(zip(_CONTAINERPLAN_FIELDS, self._fields(), strict=True))
        values.update(changes)
        return ContainerPlan(**values)


#: the fields of :class:`Rewrite`, in order
_REWRITE_FIELDS = (
    "direction",
    "manifest",
    "containers",
    "notes",
    "budget",
)


class Rewrite:
    """A pod in its other form: the new manifest, what happened to each
    container, and notes (roundings, budget adjustments, warnings)."""

    direction: Direction
    manifest: dict[str, Any]
    containers: tuple[ContainerPlan, ...]
    notes: tuple[str, ...]
    budget: Mapping[str, Mapping[str, str]]  # {"requests": {...}, "limits": {...}} (pod-level form)

    def __init__(
        self,
        direction: Direction,
        manifest: dict[str, Any],
        containers: tuple[ContainerPlan, ...],
        notes: tuple[str, ...],
        budget: Mapping[str, Mapping[str, str]],
    ) -> None:
        # written out, with the comparison, the hash, the repr and replace() (a
        # ``dataclass`` would make them when the module is imported, on every
        # command's start)
        self.direction = direction
        self.manifest = manifest
        self.containers = containers
        self.notes = notes
        self.budget = budget

    def _fields(self) -> tuple[Any, ...]:
        return (self.direction, self.manifest, self.containers, self.notes, self.budget)

    def __repr__(self) -> str:
        values = ", ".join(f"{n}={v!r}" for n, v in zip(_REWRITE_FIELDS, self._fields(), strict=True))
        return f"{type(self).__qualname__}({values})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rewrite) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def replace(self, **changes: Any) -> Rewrite:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values: dict[str, Any] = dict(zip(_REWRITE_FIELDS, self._fields(), strict=True))
        values.update(changes)
        return Rewrite(**values)


# --------------------------------------------------------------------------
# classification


def has_pod_level_resources(doc: Mapping[str, Any]) -> bool:
    """The manifest sets pod-level requests or limits (cpu/memory/hugepages),
    whatever the feature gates say."""
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        return False
    res = spec.get("resources")
    if not isinstance(res, Mapping):
        return False
    for key in ("requests", "limits"):
        part = res.get(key)
        if isinstance(part, Mapping) and any(
            isinstance(k, str) and is_supported_pod_level_resource(k) for k in part
        ):
            return True
    return False


def _name_list(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def sidecar_names(pod: Pod, named: Collection[str] = ()) -> frozenset[str]:
    """The pod's sidecars by the rules of :mod:`podnuma.analysis.sidecars`
    (``named``: the names the user gave)."""
    return frozenset(recognise_sidecars(pod, named))


def exclusive_override(pod: Pod, name: str) -> bool | None:
    """The annotations' say on container ``name``: keep (True), move to the
    shared pool (False), or nothing (None)."""
    per = pod.annotations.get(f"{ANNOTATION_EXCLUSIVE}.{name}")
    if per is not None:
        low = per.strip().lower()
        if low in ("true", "yes", "1"):
            return True
        if low in ("false", "no", "0"):
            return False
    if name in _name_list(pod.annotations.get(ANNOTATION_EXCLUSIVE, "")):
        return True
    return None


def _annotation_warnings(pod: Pod) -> list[str]:
    out: list[str] = []
    for key, value in pod.annotations.items():
        if key in (ANNOTATION_EXCLUSIVE, ANNOTATION_SIDECARS):
            for n in _name_list(value):
                if not pod.has_container(n):
                    out.append(f"annotation {key} names {n!r}, which is not a container of the pod")
        elif key.startswith(ANNOTATION_EXCLUSIVE + "."):
            n = key[len(ANNOTATION_EXCLUSIVE) + 1:]
            if not pod.has_container(n):
                out.append(f"annotation {key} names {n!r}, which is not a container of the pod")
            elif value.strip().lower() not in ("true", "false", "yes", "no", "1", "0"):
                out.append(f"annotation {key}: expected \"true\" or \"false\", found {value!r} (ignored)")
    return out


def has_whole_cpus(container: Container) -> bool:
    """Guaranteed-equivalent with an integer CPU count >= 1: the static CPU
    policy gives such a container exclusive CPUs."""
    if not is_container_equivalent_qos_guaranteed(container):
        return False
    cpu = container.requests.get("cpu")
    return cpu is not None and cpu.milli_value() >= 1000 and cpu.milli_value() % 1000 == 0


def _decide(pod: Pod, c: Container, sidecars: Mapping[str, str]) -> ContainerPlan:
    override = exclusive_override(pod, c.name)
    rule = sidecars.get(c.name)
    if override is True:
        why = "marked exclusive by annotation"
        if not has_whole_cpus(c):
            why += " (no whole CPUs: it can get exclusive memory, not exclusive CPUs)"
        return ContainerPlan(c.name, c.kind, "exclusive", why, rule)
    if override is False:
        return ContainerPlan(c.name, c.kind, "shared", "marked shared by annotation", rule)
    if rule is not None:
        why = "sidecar" if c.is_sidecar else f"sidecar: {rule}"  # native sidecars say so by their type
        return ContainerPlan(c.name, c.kind, "shared", why, rule)
    if has_whole_cpus(c):
        return ContainerPlan(c.name, c.kind, "exclusive", "requests whole CPUs (requests == limits)")
    if not c.requests and not c.limits:
        return ContainerPlan(c.name, c.kind, "shared", "no resources")
    if not is_container_equivalent_qos_guaranteed(c):
        return ContainerPlan(c.name, c.kind, "shared", "requests != limits")
    return ContainerPlan(c.name, c.kind, "shared", "less than one whole CPU / fractional CPU")


# --------------------------------------------------------------------------
# manifest editing helpers


def _container_docs(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Container name -> its mapping inside ``manifest`` (init and app)."""
    spec = manifest.get("spec") or {}
    out: dict[str, dict[str, Any]] = {}
    for key in ("initContainers", "containers"):
        for raw in spec.get(key) or ():
            if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                out[raw["name"]] = raw
    return out


def _strip_pod_level_resources(ctr: dict[str, Any], keep: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """Drop the container's cpu, memory and huge page requests and limits
    but those named in ``keep``; returns (kept, lost) as ``section.name=value``."""
    kept: list[str] = []
    lost: list[str] = []
    res = ctr.get("resources")
    if not isinstance(res, dict):
        return kept, lost
    for key in ("requests", "limits"):
        part = res.get(key)
        if isinstance(part, dict):
            for name in [n for n in part if isinstance(n, str) and is_supported_pod_level_resource(n)]:
                if name in keep:
                    kept.append(f"{key}.{name}={part[name]}")
                    continue
                lost.append(f"{key}.{name}={part[name]}")
                del part[name]
            if not part:
                del res[key]
    if not res:
        del ctr["resources"]
    return kept, lost


def _set_resource(ctr: dict[str, Any], section: str, name: str, value: str) -> None:
    res = ctr.get("resources")
    if not isinstance(res, dict):
        res = {}
        ctr["resources"] = res
    part = res.get(section)
    if not isinstance(part, dict):
        part = {}
        res[section] = part
    part[name] = value


def _page_size(name: str) -> int:
    try:
        return parse_quantity(name[len("hugepages-"):]).value()
    except QuantityError:
        return 1


def _cpu_text(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _bytes_text(n: int) -> str:
    return str(Quantity.from_int(n, binary=True))


def _fmt(name: str, q: Quantity) -> str:
    return _text(name, _amount(name, q))


def _amount(name: str, q: Quantity) -> int:
    """Millicores for cpu, bytes otherwise, rounded away from zero as
    ``MilliValue``/``Value`` round, but exact: never wrapped (the checks of
    :func:`_check_countable` refuse what the kubelet cannot count)."""
    step = 1_000_000 if name == "cpu" else 1_000_000_000
    whole = -(-abs(q.nanos) // step)  # ceil of the magnitude
    return whole if q.nanos >= 0 else -whole


def _unit_word(name: str) -> str:
    return "millicores" if name == "cpu" else "bytes"


def _container_path(doc: Mapping[str, Any], c: Container, section: str, name: str) -> str:
    """Where ``c``'s ``section`` value of ``name`` is written in ``doc``
    (a request defaulted from the limit: the limit's path)."""
    key = "initContainers" if c.is_init else "containers"
    base = f"spec.{key}[{c.index}].resources"
    if section == "requests":
        spec = doc.get("spec")
        ctrs = spec.get(key) if isinstance(spec, Mapping) else None
        raw = ctrs[c.index] if isinstance(ctrs, list) and c.index < len(ctrs) else None
        res = raw.get("resources") if isinstance(raw, Mapping) else None
        written = res.get("requests") if isinstance(res, Mapping) else None
        if not (isinstance(written, Mapping) and name in written):
            section = "limits"
    return resource_path(f"{base}.{section}", name)


def _pod_level_path(doc: Mapping[str, Any], section: str, name: str) -> str:
    """Where the pod-level ``section`` value of ``name`` is written (one
    defaulted from the other section: that one; from the containers: the
    ``spec.resources`` it was defaulted into)."""
    spec = doc.get("spec")
    res = spec.get("resources") if isinstance(spec, Mapping) else None
    for sec in (section, "limits" if section == "requests" else "requests"):
        written = res.get(sec) if isinstance(res, Mapping) else None
        if isinstance(written, Mapping) and name in written:
            return resource_path(f"spec.resources.{sec}", name)
    return "spec.resources"


def _shown(text: str) -> str:
    """A quantity as written, or for one of more than 40 characters its
    first 12 and its length."""
    return text if len(text) <= 40 else f"{text[:12]}... ({len(text)} characters)"


def _amount_text(amount: int) -> str:
    """``amount`` in digits, or for one of more than 40 digits its first 12
    and how many there are (a quantity may have thousands: ``1e4400``)."""
    text = int_text(amount)
    digits = len(text.lstrip("-"))
    return text if digits <= 40 else f"{text[:12]}... ({digits} digits)"


def _named(name: str, q: Quantity) -> str:
    """``cpu 100k``: a quantity named with its text, when that text is its
    value (a value past int64 may print as another: 1e53 as ``100``)."""
    text = str(q)
    try:
        same = parse_quantity(text).nanos == q.nanos
    except QuantityError:
        same = False
    return f"{name} {_shown(text)}" if same else name


def _too_big(what: str, name: str, amount: int, form: str) -> str:
    return (
        f"{what} is {_amount_text(amount)} {_unit_word(name)}, more than the kubelet counts in an int64 "
        f"({_INT64_MAX}): no {form} form is derived from values that wrap"
    )


def _check_countable(doc: Mapping[str, Any], pod: Pod, form: str) -> None:
    """Refuse (``InputError`` at the field path) a cpu, memory or huge page
    request or limit of a container, or of the pod, that the kubelet cannot
    count in an int64 (its ``MilliValue``/``Value`` wrap)."""
    for c in pod.all_containers():
        for section, values in (("requests", c.requests), ("limits", c.limits)):
            for name, q in values.items():
                if not is_supported_pod_level_resource(name):
                    continue
                amount = _amount(name, q)
                if amount > _INT64_MAX:
                    raise InputError(_too_big(_named(name, q), name, amount, form),
                                     path=_container_path(doc, c, section, name))
    if pod.resources is not None:
        for section, values in (("requests", pod.resources.requests), ("limits", pod.resources.limits)):
            for name, q in values.items():
                amount = _amount(name, q)
                if is_supported_pod_level_resource(name) and amount > _INT64_MAX:
                    raise InputError(_too_big(_named(name, q), name, amount, form),
                                     path=_pod_level_path(doc, section, name))


def _check_budget(
    doc: Mapping[str, Any], pod: Pod, section: str, budget: Mapping[str, int], form: str
) -> None:
    """Refuse a pod whose ``section`` budget (millicores or bytes), made of
    its containers' values, does not fit an int64: at the path of the
    largest of them."""
    for name, amount in budget.items():
        if amount <= _INT64_MAX:
            continue
        largest: tuple[int, str] = (-1, "spec")
        for c in pod.all_containers():
            q = (c.requests if section == "requests" else c.limits).get(name)
            if q is not None and _amount(name, q) > largest[0]:
                largest = (_amount(name, q), _container_path(doc, c, section, name))
        raise InputError(
            _too_big(f"the pod's {name} {section} budget (the containers' together)", name, amount, form),
            path=largest[1],
        )


def clean_server_fields(manifest: dict[str, Any]) -> list[str]:
    """Drop what the API server and the scheduler set (a rewrite is a new
    manifest): ``status``, ``spec.nodeName`` and the server's metadata."""
    dropped: list[str] = []
    spec = manifest.get("spec")
    if isinstance(spec, dict) and "nodeName" in spec:
        del spec["nodeName"]
        dropped.append("spec.nodeName")
    if "status" in manifest:
        del manifest["status"]
        dropped.append("status")
    meta = manifest.get("metadata")
    if isinstance(meta, dict):
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields",
                    "generation", "selfLink"):
            if key in meta:
                del meta[key]
                dropped.append(f"metadata.{key}")
    return dropped


def _served_text(name: str, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value
    try:
        q = quantity_from_manifest(value)
    except QuantityError:
        return value  # left for the pod's parse to refuse, with its path
    if not -_INT64_MAX - 1 <= _amount(name, q) <= _INT64_MAX:
        # a value the kubelet cannot count in an int64 (its MilliValue or
        # Value wraps) is left as written: its canonical text is another
        # value (1e53's ``String()`` is ``100``), which would hide the wrap
        # ``simulate`` counts (and the checks of the other form refuse)
        return value
    return str(round_up_milli(q))


def _served_list(raw: Any) -> Any:
    if not isinstance(raw, Mapping):
        return raw
    return {name: _served_text(str(name), value) for name, value in raw.items()}


def _served_resources(raw: Any) -> Any:
    if not isinstance(raw, Mapping):
        return raw
    return {key: _served_list(value) if key in ("requests", "limits") else value
            for key, value in raw.items()}


def served_manifest(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The Pod manifest ``doc`` as the API server stores it, and so as the
    kubelet receives a pod created through it: a copy with every quantity
    (container and pod-level requests and limits, ``spec.overhead``) written
    as the API server writes it, the canonical text (``String()``) of the
    value after the v1 defaults round it up to milli: ``0.5Gi`` ->
    ``512Mi``, ``1.5`` -> ``1500m``, ``1024Ki`` -> ``1Mi``. The kubelet
    decodes that text again: ``memory: 0.5Gi`` as written is an inf.Dec the
    Static memory manager cannot turn into an int64 (a static pod the
    kubelet reads from its file keeps it), its stored ``512Mi`` an int64
    amount. A value that does not parse is left as written (the pod's parse
    refuses it, with its path); nothing else changes, and ``doc`` is not
    modified."""
    out = dict(doc)
    spec = out.get("spec")
    if not isinstance(spec, Mapping):
        return out
    spec = dict(spec)
    for key in ("initContainers", "containers"):
        ctrs = spec.get(key)
        if isinstance(ctrs, list):
            spec[key] = [
                {**c, "resources": _served_resources(c["resources"])}
                if isinstance(c, Mapping) and isinstance(c.get("resources"), Mapping) else c
                for c in ctrs
            ]
    if "resources" in spec:
        spec["resources"] = _served_resources(spec["resources"])
    if "overhead" in spec:
        spec["overhead"] = _served_list(spec["overhead"])
    out["spec"] = spec
    return out


# --------------------------------------------------------------------------
# per-container -> pod-level


def to_pod_level(
    doc: Mapping[str, Any], pod: Pod, *, shared_pool_cpus: int | None = None,
    sidecars: Mapping[str, str] | None = None, keep_limits: bool = False,
) -> Rewrite:
    """The pod-level form of a per-container pod (rules in the module doc).

    ``pod`` is ``doc`` parsed (``parse_pod``); ``doc`` is not modified.
    ``shared_pool_cpus`` sizes the pod shared pool: the CPU budget becomes the
    exclusive slices of the long-running containers plus that many CPUs
    (never less than an exclusive regular init container needs). By default
    the budget keeps the pod's effective CPU request. ``sidecars``: container
    name -> the rule that recognised it (default: the rules of
    :mod:`podnuma.analysis.sidecars` without user names). ``keep_limits``:
    moved containers keep their own memory request and limit.

    Raises ``InputError`` (path relative to ``doc``) for a pod whose
    quantities, or the budget made of them, the kubelet cannot count in an
    int64.
    """
    _check_countable(doc, pod, "pod-level")
    notes: list[str] = _annotation_warnings(pod)
    if sidecars is None:
        sidecars = recognise_sidecars(pod)
    plans = tuple(_decide(pod, c, sidecars) for c in pod.all_containers())
    role = {p.name: p.role for p in plans}

    requests = aggregate_requests_of(pod.init_containers, pod.containers)
    limits = aggregate_limits_of(pod.init_containers, pod.containers)
    everyone = pod.all_containers()
    budget_req: dict[str, int] = {}
    budget_lim: dict[str, int] = {}
    for name, q in requests.items():
        if is_supported_pod_level_resource(name) and q.sign() > 0:
            budget_req[name] = _amount(name, q)
    for name, q in limits.items():
        if not is_supported_pod_level_resource(name) or q.sign() <= 0:
            continue
        if is_hugepage_resource(name) or all(name in c.limits for c in everyone):
            budget_lim[name] = _amount(name, q)

    guaranteed = all(
        name in budget_req and budget_lim.get(name) == budget_req[name] for name in ("cpu", "memory")
    )
    if guaranteed and shared_pool_cpus is not None:
        sized = _sized_cpu_budget(pod, role, shared_pool_cpus)
        if sized != budget_req["cpu"]:
            notes.append(
                f"pod-level CPU budget set to {_cpu_text(sized)} (was {_cpu_text(budget_req['cpu'])}): "
                f"the exclusive slices plus a pod shared pool of {shared_pool_cpus} CPU(s)"
            )
            budget_req["cpu"] = budget_lim["cpu"] = sized
    if guaranteed and budget_req["cpu"] % 1000:
        rounded = (budget_req["cpu"] + 999) // 1000 * 1000
        notes.append(
            f"pod-level CPU budget rounded up from {_cpu_text(budget_req['cpu'])} to "
            f"{_cpu_text(rounded)}: the kubelet pins no CPUs for a fractional pod budget"
        )
        budget_req["cpu"] = budget_lim["cpu"] = rounded
    if guaranteed:
        _fill_shared_pools(pod, role, budget_req, budget_lim, notes)
    _check_budget(doc, pod, "requests", budget_req, "pod-level")
    _check_budget(doc, pod, "limits", budget_lim, "pod-level")

    manifest = _clean_copy(doc, notes)
    docs = _container_docs(manifest)
    by_name = {c.name: c for c in everyone}
    final: list[ContainerPlan] = []
    for p in plans:
        if p.role == "shared" and p.name in docs:
            c = by_name[p.name]
            # the memory request and limit stay only as a pair the API keeps
            # (a limit alone is defaulted into the request; that is the pair)
            keep = ("memory",) if keep_limits and guaranteed and "memory" in c.limits else ()
            kept, lost = _strip_pod_level_resources(docs[p.name], keep)
            p = p.replace(kept=tuple(kept), lost=tuple(lost))
        final.append(p)
    plans = tuple(final)

    spec = manifest.setdefault("spec", {})
    res: dict[str, Any] = {}
    if budget_req:
        res["requests"] = {n: _text(n, v) for n, v in _ordered(budget_req)}
    if budget_lim:
        res["limits"] = {n: _text(n, v) for n, v in _ordered(budget_lim)}
    # spec.resources goes first in spec, where people look for it.
    new_spec = {"resources": res}
    new_spec.update((k, v) for k, v in spec.items() if k != "resources")
    manifest["spec"] = new_spec
    if not guaranteed:
        notes.append(
            "the pod-level form is not Guaranteed (pod-level requests != limits): "
            "the kubelet reserves no CPUs or memory for it"
        )
    return Rewrite(
        direction="podLevel",
        manifest=manifest,
        containers=plans,
        notes=tuple(notes),
        budget={"requests": dict(res.get("requests", {})), "limits": dict(res.get("limits", {}))},
    )


def _sized_cpu_budget(pod: Pod, role: Mapping[str, str], shared_pool_cpus: int) -> int:
    """Millicores: the exclusive CPUs of the long-running containers (app
    containers and sidecars that keep a slice) plus the shared pool; at least
    what each exclusive regular init container needs beside the exclusive
    sidecars declared before it."""

    def exclusive_milli(c: Container) -> int:
        if role.get(c.name) != "exclusive" or not has_whole_cpus(c):
            return 0
        return c.requests["cpu"].milli_value()

    sidecars_before = 0
    need_init = 0
    for c in pod.init_containers:
        if c.kind == "sidecar":
            sidecars_before += exclusive_milli(c)
        else:
            need_init = max(need_init, sidecars_before + exclusive_milli(c))
    long_running = sidecars_before + sum(exclusive_milli(c) for c in pod.containers)
    return max(long_running + shared_pool_cpus * 1000, need_init)


def _ordered(values: Mapping[str, int]) -> list[tuple[str, int]]:
    order = {"cpu": 0, "memory": 1}
    return sorted(values.items(), key=lambda kv: (order.get(kv[0], 2), kv[0]))


def _text(name: str, amount: int) -> str:
    return _cpu_text(amount) if name == "cpu" else _bytes_text(amount)


def _fill_shared_pools(
    pod: Pod,
    role: Mapping[str, Role],
    budget_req: dict[str, int],
    budget_lim: dict[str, int],
    notes: list[str],
) -> None:
    """Grow a budget the kubelet would find too small (``validatePodScopeResources``
    of the CPU and memory managers, on the rewritten containers)."""

    def exclusive_amount(c: Container, name: str) -> int:
        if role[c.name] != "exclusive" or not is_container_equivalent_qos_guaranteed(c):
            return 0
        if name == "cpu" and not has_whole_cpus(c):
            return 0
        q = c.requests.get(name)
        return 0 if q is None else _amount(name, q)

    def is_shared(c: Container, name: str) -> bool:
        # CPU manager: no exclusive CPUs; memory manager: no memory blocks of
        # its own at all (a kept container without huge pages is not shared).
        if name == "cpu":
            return exclusive_amount(c, name) == 0
        return role[c.name] != "exclusive" or not is_container_equivalent_qos_guaranteed(c)

    for name in list(budget_req):
        budget = budget_req[name]
        need = budget
        sidecar_sum = 0
        shared_long_running = False
        for c in pod.init_containers:
            amount = exclusive_amount(c, name)
            if not c.is_sidecar:
                if amount:
                    need = max(need, sidecar_sum + amount)
                else:
                    need = max(need, sidecar_sum + _unit(name))
                continue
            if is_shared(c, name):
                shared_long_running = True
            sidecar_sum += amount
        long_running = sidecar_sum + sum(exclusive_amount(c, name) for c in pod.containers)
        if any(is_shared(c, name) for c in pod.containers):
            shared_long_running = True
        if shared_long_running:
            need = max(need, long_running + _unit(name))
        if need > budget:
            added = need - budget
            notes.append(
                f"pod-level {name} budget raised from {_text(name, budget)} to {_text(name, need)} "
                f"(+{_text(name, added)}): the kubelet rejects a pod whose exclusive containers "
                f"take the whole budget while containers on the pod shared pool need it"
            )
            budget_req[name] = need
            if name in budget_lim:
                budget_lim[name] = max(budget_lim[name], need)


def _unit(name: str) -> int:
    if name == "cpu":
        return 1000
    if is_hugepage_resource(name):
        return _page_size(name)
    return _MI


# --------------------------------------------------------------------------
# pod-level -> per-container


def _split(total: int, n: int) -> list[int]:
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def _clean_copy(doc: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """A deep copy of the manifest without the fields the API server sets
    (noted when there were any)."""
    manifest = copy.deepcopy(dict(doc))
    dropped = clean_server_fields(manifest)
    if dropped:
        notes.append("dropped server-set fields: " + ", ".join(dropped))
    return manifest


def to_per_container(doc: Mapping[str, Any], pod: Pod) -> Rewrite:
    """The per-container form of a pod-level pod (rules in the module doc).

    Raises ``InputError`` (path relative to ``doc``) for a pod whose
    quantities the kubelet cannot count in an int64.
    """
    assert pod.resources is not None
    _check_countable(doc, pod, "per-container")
    notes: list[str] = []
    manifest = _clean_copy(doc, notes)
    spec = manifest.setdefault("spec", {})
    spec.pop("resources", None)
    docs = _container_docs(manifest)
    long_running: list[Container] = [c for c in pod.init_containers if c.is_sidecar] + list(pod.containers)
    # container -> resource -> the sections ("requests", "limits") it got a share of
    given: dict[str, dict[str, set[str]]] = {c.name: {} for c in pod.all_containers()}
    # (resource, section) -> (the containers that take a share but get none, the budget)
    left_out: dict[tuple[str, str], tuple[list[str], int]] = {}

    for section, budget_map in (("requests", pod.resources.requests), ("limits", pod.resources.limits)):
        for name, q in budget_map.items():
            if not is_supported_pod_level_resource(name):
                continue
            total = _amount(name, q)

            def own(c: Container, name: str = name, section: str = section) -> int | None:
                m = c.requests if section == "requests" else c.limits
                v = m.get(name)
                return None if v is None else _amount(name, v)

            def own_request(c: Container, name: str = name) -> int:
                v = c.requests.get(name)
                return 0 if v is None else _amount(name, v)

            takers = [c for c in long_running if own(c) is None]
            fixed = sum(own(c) or 0 for c in long_running)
            pool = total - fixed
            shares: dict[str, int] = {}
            if takers:
                # a limit never below the container's own request: those
                # come first, the rest is split evenly
                floor = {c.name: own_request(c) for c in takers} if section == "limits" else {}
                rest = pool - sum(floor.values())
                if pool > 0 and rest >= 0:
                    unit = 1 if name == "cpu" else (_page_size(name) if is_hugepage_resource(name) else 1)
                    units = _split(rest // unit, len(takers))
                    for c, u in zip(takers, units, strict=True):
                        if u * unit + floor.get(c.name, 0) > 0:
                            shares[c.name] = u * unit + floor.get(c.name, 0)
                missed = [c.name for c in takers if c.name not in shares]
                if missed:
                    left_out[(name, section)] = (missed, total)
            # regular init containers without the resource: the budget minus
            # the sidecars declared before them
            sidecars_before = 0
            for c in pod.init_containers:
                if c.is_sidecar:
                    mine = own(c)
                    sidecars_before += mine if mine is not None else shares.get(c.name, 0)
                    continue
                if own(c) is None and total - sidecars_before > 0:
                    shares[c.name] = total - sidecars_before
            for cname, amount in shares.items():
                if cname in docs:
                    _set_resource(docs[cname], section, name, _text(name, amount))
                    given[cname].setdefault(name, set()).add(section)

    # A cpu or memory limit without a request would be defaulted into an
    # equal request: a container that got a share of the limit and none of
    # the request says so with an explicit request of 0.
    zero_request: dict[str, list[str]] = {}
    by_name = {c.name: c for c in pod.all_containers()}
    for cname, got in given.items():
        for name, sections in got.items():
            if (sections == {"limits"} and not is_hugepage_resource(name)
                    and name not in by_name[cname].requests and cname in docs):
                _set_resource(docs[cname], "requests", name, "0")
                zero_request.setdefault(name, []).append(cname)
    for cname, got in given.items():
        res = docs[cname].get("resources") if got and cname in docs else None
        if isinstance(res, dict) and "requests" in res:  # requests first, where people look
            docs[cname]["resources"] = {"requests": res["requests"],
                                        **{k: v for k, v in res.items() if k != "requests"}}

    for (name, section), (missed, total) in left_out.items():
        zeroed = [n for n in missed if n in zero_request.get(name, ())] if section == "requests" else []
        why = ""
        if zeroed:
            why = (f" ({', '.join(zeroed)}: a request of 0, written out beside the share of the "
                   f"{name} limit, which alone would be defaulted into an equal request)")
        notes.append(
            f"no {name} {section} left for {', '.join(missed)} "
            f"(budget {_text(name, total)}, taken by containers that set it): they get none{why}"
        )

    plans: list[ContainerPlan] = []
    for c in pod.all_containers():
        got = given[c.name]
        if got:
            parts = []
            for name in sorted(got):
                if got[name] == {"limits"}:
                    zero = " (request 0)" if c.name in zero_request.get(name, ()) else ""
                    parts.append(f"{name} limit{zero}")
                elif got[name] == {"requests"} and name in pod.resources.limits:
                    parts.append(f"{name} request")
                else:
                    parts.append(name)
            plans.append(ContainerPlan(c.name, c.kind, "shared",
                                       "gets a share of the pod budget: " + ", ".join(parts)))
        else:
            plans.append(ContainerPlan(c.name, c.kind, "exclusive", "keeps its own resources"))
    if any(given.values()):
        notes.append(
            "containers without their own resources get an equal share of the pod budget left "
            "after the containers that set them"
        )
    return Rewrite(
        direction="perContainer",
        manifest=manifest,
        containers=tuple(plans),
        notes=tuple(notes),
        budget={
            "requests": {n: _fmt(n, q) for n, q in pod.resources.requests.items()},
            "limits": {n: _fmt(n, q) for n, q in pod.resources.limits.items()},
        },
    )


def other_form(doc: Mapping[str, Any], pod: Pod) -> Rewrite:
    """The pod-level form of a per-container pod, or the per-container form
    of a pod-level pod. Raises ``InputError`` as they do."""
    if pod.resources is not None and has_pod_level_resources(doc):
        return to_per_container(doc, pod)
    return to_pod_level(doc, pod)

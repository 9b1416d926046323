"""v1 Pod manifests: the parts of a Pod the kubelet's resource managers read.

Mirrors what a Pod looks like by the time the kubelet sees it: the API
server's v1 defaulting (``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Pod``,
``SetDefaults_ResourceList``), its pod-level resource defaulting
(``pkg/api/pod/util.go`` behind ``PodLevelResourcesFixDefaulting``, run from
the pod registry strategy's ``PrepareForCreate``), the dropping of disabled
fields (``dropDisabledPodLevelResources``) and the validation of the fields
podnuma reads (``pkg/apis/core/validation/validation.go``:
``validateContainerResourceName``, ``ValidateResourceQuantityValue``,
``validateResourceRequirements``, ``validatePodResources``,
``validatePodResourceConsistency``, container names, ``restartPolicy``).

Field paths in errors are relative to the pod document; resource keys are
written ``requests.cpu`` (``requests[example.com/gpu]`` when the key holds a
dot or slash).
"""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol

from podnuma.api.quantity import Quantity, QuantityError, parse_quantity, quantity_from_manifest
from podnuma.api.resources import (
    HUGEPAGES_PREFIX,
    aggregate_limits_of,
    aggregate_requests_of,
    is_hugepage_resource,
    is_native_resource,
    is_overcommit_allowed,
    is_supported_pod_level_resource,
)
from podnuma.errors import InputError

__all__ = [
    "ContainerKind",
    "Container",
    "PodResources",
    "Pod",
    "FeatureGateView",
    "POD_UID_NAMESPACE",
    "derive_pod_uid",
    "parse_pod",
]

ContainerKind = Literal["init", "sidecar", "app"]

#: Namespace UUID for pods without ``metadata.uid`` (uuid5 of "namespace/name").
POD_UID_NAMESPACE = uuid.UUID("6f1d5a8e-3c2b-5b7e-9a41-2d0c7e5f9b13")

_EMPTY: Mapping[str, Quantity] = MappingProxyType({})


def _frozen(resources: Mapping[str, Quantity]) -> Mapping[str, Quantity]:
    if not resources:
        return _EMPTY
    return MappingProxyType(dict(sorted(resources.items())))


@dataclass(frozen=True, slots=True, eq=True)
class Container:
    """One container after API-server defaulting (requests filled from limits).

    ``kind`` is ``init`` (regular init container), ``sidecar`` (init container
    with ``restartPolicy: Always``) or ``app``; ``index`` is the position in
    its own list (``initContainers`` or ``containers``).
    """

    def __deepcopy__(self, memo: dict[int, object]) -> Container:
        return self  # immutable: a copy of a node's state shares its pods


    name: str
    kind: ContainerKind
    requests: Mapping[str, Quantity] = field(default_factory=lambda: _EMPTY)
    limits: Mapping[str, Quantity] = field(default_factory=lambda: _EMPTY)
    restart_policy: str | None = None
    index: int = 0
    # values derived from this (immutable) container, kept by memo()
    _memo: dict[str, Any] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "requests", _frozen(self.requests))
        object.__setattr__(self, "limits", _frozen(self.limits))

    def memo(self) -> dict[str, Any]:
        """A private cache of values derived from this container (it is
        immutable, so they never go stale); keys name the derivation."""
        memo = self._memo
        if memo is None:
            memo = {}
            object.__setattr__(self, "_memo", memo)
        return memo

    def __hash__(self) -> int:
        return hash(
            (
                self.name,
                self.kind,
                tuple(self.requests.items()),
                tuple(self.limits.items()),
                self.restart_policy,
                self.index,
            )
        )

    @property
    def is_init(self) -> bool:
        """Declared under ``initContainers`` (regular init or sidecar)."""
        return self.kind != "app"

    @property
    def is_sidecar(self) -> bool:
        """A restartable init container (``restartPolicy: Always``)."""
        return self.kind == "sidecar"


@dataclass(frozen=True, slots=True, eq=True)
class PodResources:
    """``spec.resources`` (KEP-2837) after defaulting; either map may be empty."""

    def __deepcopy__(self, memo: dict[int, object]) -> PodResources:
        return self  # immutable: a copy of a node's state shares its pods


    requests: Mapping[str, Quantity] = field(default_factory=lambda: _EMPTY)
    limits: Mapping[str, Quantity] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        object.__setattr__(self, "requests", _frozen(self.requests))
        object.__setattr__(self, "limits", _frozen(self.limits))

    def __hash__(self) -> int:
        return hash((tuple(self.requests.items()), tuple(self.limits.items())))

    def is_empty(self) -> bool:
        return not self.requests and not self.limits


@dataclass(frozen=True, slots=True, eq=True)
class Pod:
    """A parsed, defaulted and validated v1 Pod.

    ``resources`` is ``None`` when ``spec.resources`` is absent or the
    ``PodLevelResources`` gate is off (the field is then dropped); an empty
    ``PodResources`` when it is present but empty (the QoS computation tells
    the two apart).
    """

    def __deepcopy__(self, memo: dict[int, object]) -> Pod:
        return self  # immutable: a copy of a node's state shares its pods


    uid: str
    name: str
    namespace: str = "default"
    init_containers: tuple[Container, ...] = ()
    containers: tuple[Container, ...] = ()
    ephemeral_containers: tuple[str, ...] = ()
    resources: PodResources | None = None
    overhead: Mapping[str, Quantity] = field(default_factory=lambda: _EMPTY)
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    annotations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # values derived from this (immutable) pod, kept by memo()
    _memo: dict[str, Any] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __init__(
        self,
        uid: str,
        name: str,
        namespace: str = "default",
        init_containers: tuple[Container, ...] = (),
        containers: tuple[Container, ...] = (),
        ephemeral_containers: tuple[str, ...] = (),
        resources: PodResources | None = None,
        overhead: Mapping[str, Quantity] | None = None,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> None:
        # written out (not generated by dataclass): a compiled build runs it
        # natively. The mappings are frozen copies.
        object.__setattr__(self, "uid", uid)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "namespace", namespace)
        object.__setattr__(self, "init_containers", init_containers)
        object.__setattr__(self, "containers", containers)
        object.__setattr__(self, "ephemeral_containers", ephemeral_containers)
        object.__setattr__(self, "resources", resources)
        object.__setattr__(self, "overhead", _frozen(overhead) if overhead else _EMPTY)
        object.__setattr__(self, "labels", MappingProxyType(dict(labels) if labels else {}))
        object.__setattr__(
            self, "annotations", MappingProxyType(dict(annotations) if annotations else {})
        )
        object.__setattr__(self, "_memo", None)

    def memo(self) -> dict[str, Any]:
        """A private cache of values derived from this pod (QoS class,
        aggregated requests...): the pod is immutable, so they never go
        stale. Keys name the derivation and its inputs (gates)."""
        memo = self._memo
        if memo is None:
            memo = {}
            object.__setattr__(self, "_memo", memo)
        return memo

    def with_identity(self, name: str, uid: str, labels: Mapping[str, str]) -> Pod:
        """This pod under another name, UID and labels (a copy of one
        workload's parse for each of its pods). Every value :meth:`memo`
        keeps is derived from the spec alone, so the copy shares them."""
        pod = Pod(
            uid=uid,
            name=name,
            namespace=self.namespace,
            init_containers=self.init_containers,
            containers=self.containers,
            ephemeral_containers=self.ephemeral_containers,
            resources=self.resources,
            overhead=self.overhead,
            labels=labels,
            annotations=self.annotations,
        )
        object.__setattr__(pod, "_memo", self.memo())
        return pod

    def __hash__(self) -> int:
        return hash((self.uid, self.namespace, self.name, self.init_containers, self.containers))

    @property
    def ref(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def all_containers(self) -> tuple[Container, ...]:
        """Init containers (sidecars included, declared order), then app containers."""
        return self.init_containers + self.containers

    def container(self, name: str) -> Container:
        """The init or app container called ``name``; ``KeyError`` if none."""
        for ctr in self.all_containers():
            if ctr.name == name:
                return ctr
        raise KeyError(name)

    def has_container(self, name: str) -> bool:
        return any(ctr.name == name for ctr in self.all_containers())

    def sidecars(self) -> tuple[Container, ...]:
        return tuple(c for c in self.init_containers if c.is_sidecar)


class FeatureGateView(Protocol):
    """What ``parse_pod`` needs from ``FeatureGates``."""

    def enabled(self, name: str) -> bool: ...


def derive_pod_uid(namespace: str, name: str) -> str:
    """The stable uid podnuma gives a pod without ``metadata.uid``."""
    return str(uuid.uuid5(POD_UID_NAMESPACE, f"{namespace}/{name}"))


# --------------------------------------------------------------------------
# validation helpers (apimachinery/pkg/util/validation)

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_-]+")

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

# helper.IsStandardResourceName (quota names included) and the container subset.
_STANDARD_RESOURCES = frozenset(
    {
        "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
        "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
        "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
        "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
        "services.loadbalancers",
    }
)  # fmt: skip
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_INTEGER_RESOURCES = frozenset(
    {
        "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
        "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip


def _quote(value: object) -> str:
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _invalid(path: str, value: object, detail: str) -> InputError:
    return InputError(f"Invalid value: {_quote(value)}: {detail}", path=path)


def _required(path: str, detail: str = "") -> InputError:
    return InputError("Required value" + (f": {detail}" if detail else ""), path=path)


def _unsupported(path: str, value: object, supported: Sequence[str]) -> InputError:
    allowed = ", ".join(_quote(s) for s in supported)
    return InputError(f"Unsupported value: {_quote(value)}: supported values: {allowed}", path=path)


def _forbidden(path: str, detail: str) -> InputError:
    return InputError(f"Forbidden: {detail}", path=path)


def _join(base: str, child: str) -> str:
    return f"{base}.{child}" if base else child


def _key(base: str, key: str) -> str:
    """``field.Path.Key``: a map key in brackets, whatever it holds."""
    return f"{base}[{key}]"


def _dns_label_errors(value: str, max_len: str = "characters") -> list[str]:
    """``IsDNS1123Label``: its messages in order (``max_len`` is the unit
    of the length message: apimachinery's util/validation says
    "characters", its validate/content package "bytes")."""
    errors: list[str] = []
    if len(value) > 63:
        errors.append(f"must be no more than 63 {max_len}")
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            errors.append("must not contain dots")  # a subdomain: its dots are the fault
        else:
            errors.append(_DNS1123_LABEL_MSG)
    return errors


def _dns_subdomain_errors(value: str, max_len: str = "characters") -> list[str]:
    """``IsDNS1123Subdomain``."""
    errors: list[str] = []
    if len(value) > 253:
        errors.append(f"must be no more than 253 {max_len}")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(_DNS1123_SUBDOMAIN_MSG)
    return errors


def _check_dns_label(value: str, path: str) -> None:
    for detail in _dns_label_errors(value):
        raise _invalid(path, value, detail)


def _check_dns_subdomain(value: str, path: str) -> None:
    for detail in _dns_subdomain_errors(value):
        raise _invalid(path, value, detail)


def _qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName`` (``content.IsLabelKey``): its messages in order."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + m for m in _dns_subdomain_errors(prefix, "bytes"))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _QUALIFIED_NAME_PART.fullmatch(name):
        errors.append(_QUALIFIED_NAME_MSG)
    return errors


def _check_qualified_name(value: str, path: str) -> None:
    for detail in _qualified_name_errors(value):
        raise _invalid(path, value, detail)


def _is_extended_resource(name: str) -> bool:
    """``helper.IsExtendedResourceName``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    try:
        _check_qualified_name("requests." + name, "")
    except InputError:
        return False
    return True


def _check_container_resource_name(name: str, path: str) -> None:
    """``validateContainerResourceName`` (after ``validateResourceName``)."""
    _check_qualified_name(name, path)
    if "/" not in name:
        if not (name in _STANDARD_RESOURCES or name.startswith(HUGEPAGES_PREFIX)
                or name.startswith("requests." + HUGEPAGES_PREFIX)):
            raise _invalid(path, name, "must be a standard resource type or fully qualified")
        if not (name in _STANDARD_CONTAINER_RESOURCES or name.startswith(HUGEPAGES_PREFIX)):
            raise _invalid(path, name, "must be a standard resource for containers")
    elif not is_native_resource(name) and not _is_extended_resource(name):
        raise _invalid(path, name, "doesn't follow extended resource name standard")


def _check_pod_resource_name(name: str, path: str) -> None:
    """``validatePodResourceName``."""
    _check_qualified_name(name, path)
    if "/" not in name and not (
        name in _STANDARD_RESOURCES or name.startswith(HUGEPAGES_PREFIX)
        or name.startswith("requests." + HUGEPAGES_PREFIX)
    ):
        raise _invalid(path, name, "must be a standard resource type or fully qualified")
    if not is_supported_pod_level_resource(name):
        raise _unsupported(path, name, ("cpu", "hugepages-", "memory"))


# --------------------------------------------------------------------------
# quantities

_ZERO = Quantity.from_int(0)


def _round_up_milli(q: Quantity) -> Quantity:
    """``SetDefaults_ResourceList``: every quantity is rounded up to milli
    scale (``RoundUp(-3)``, which also sets apimachinery's internal form)."""
    return q.round_up(-3)


def _parse_qty(raw: object, path: str) -> Quantity:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float, type(None))):
        raise InputError(f"quantity must be a string or a number, not {type(raw).__name__}", path=path)
    try:
        return _round_up_milli(quantity_from_manifest(raw))
    except QuantityError as err:
        raise InputError(str(err), path=path) from None


def _hugepage_divisible(name: str, qty: Quantity) -> bool:
    """``helper.IsHugePageResourceValueDivisible``."""
    try:
        page = parse_quantity(name[len(HUGEPAGES_PREFIX):])
    except QuantityError:
        return False
    if page <= _ZERO:
        return False
    return qty.value() % page.value() == 0


def _mapping(raw: object, path: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise InputError(f"must be a mapping, not {type(raw).__name__}", path=path)
    for key in raw:
        if not isinstance(key, str):
            raise InputError(f"keys must be strings, not {type(key).__name__}", path=path)
    return raw


# Strict field validation (what ``kubectl apply`` asks the API server for by
# default: "strict decoding error: unknown field ..."), for the objects whose
# schema is small and stable. A typo there (``resource:``, ``limit:``) would
# otherwise silently turn a Guaranteed pod into a BestEffort one.
_POD_FIELDS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_METADATA_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields",
})
_CONTAINER_FIELDS = frozenset({
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
    "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
    "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
})
_EPHEMERAL_CONTAINER_FIELDS = _CONTAINER_FIELDS | {"targetContainerName"}
_RESOURCES_FIELDS = frozenset({"limits", "requests", "claims"})
# PodSpec gains fields release after release, so it is not checked strictly;
# only a key that is not a PodSpec field and looks like one podnuma reads
# (``initContainer``, ``container``, ``resource``) is refused.
_SPEC_FIELDS = frozenset({
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName",
    "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "securityContext",
    "imagePullSecrets", "hostname", "subdomain", "affinity", "schedulerName", "tolerations",
    "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates",
    "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
    "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates",
    "resourceClaims", "resources", "hostnameOverride",
})
_SPEC_READ = ("containers", "initContainers", "ephemeralContainers", "resources", "overhead",
              "restartPolicy")
_POD_RESTART_POLICIES = ("Always", "OnFailure", "Never")


def _unknown_fields(doc: Mapping[str, Any], known: frozenset[str], path: str) -> None:
    for key in doc:
        if key not in known:
            where = _join(path, key)
            hint = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
            more = f' (did you mean "{hint[0]}"?)' if hint else ""
            raise InputError(f"unknown field {_quote(key)}{more}", path=where)


def _check_spec_fields(spec: Mapping[str, Any]) -> None:
    for key in spec:
        if key in _SPEC_FIELDS:
            continue
        hint = difflib.get_close_matches(key, _SPEC_READ, n=1, cutoff=0.75)
        if hint:
            raise InputError(
                f'unknown field {_quote(key)} (did you mean "{hint[0]}"?)', path=_join("spec", key)
            )


def _opt_mapping(raw: object, path: str) -> Mapping[str, Any]:
    return {} if raw is None else _mapping(raw, path)


def _opt_list(raw: object, path: str) -> Sequence[Any]:
    if raw is None:
        return ()
    if not isinstance(raw, list | tuple):
        raise InputError(f"must be a list, not {type(raw).__name__}", path=path)
    return raw


def _opt_str(raw: object, path: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InputError(f"must be a string, not {type(raw).__name__}", path=path)
    return raw


def _resource_list(raw: object, path: str, *, pod_level: bool) -> dict[str, Quantity]:
    """Names and values of one resource list (``ValidateResourceQuantityValue``)."""
    out: dict[str, Quantity] = {}
    for name, value in sorted(_opt_mapping(raw, path).items()):
        where = _key(path, name)
        if pod_level:
            _check_pod_resource_name(name, where)
        else:
            _check_container_resource_name(name, where)
        qty = _parse_qty(value, where)
        if qty < _ZERO:
            raise _invalid(where, qty, "must be greater than or equal to 0")
        if (name in _INTEGER_RESOURCES or _is_extended_resource(name)) and qty.milli_value() % 1000:
            raise _invalid(where, qty, "must be an integer")
        out[name] = qty
    return out


def _check_requirements(
    requests: Mapping[str, Quantity], limits: Mapping[str, Quantity], path: str
) -> None:
    """``validateResourceRequirements`` on already-parsed (defaulted) lists."""
    req_path = _join(path, "requests")
    lim_path = _join(path, "limits")
    has_cpu_mem = False
    has_huge = False
    for name, qty in limits.items():
        if is_hugepage_resource(name):
            has_huge = True
            if not _hugepage_divisible(name, qty):
                raise _invalid(_key(lim_path, name), qty,
                               f"{qty} is not positive integer multiple of {name}")
        if name in ("cpu", "memory"):
            has_cpu_mem = True
    for name, qty in requests.items():
        limit = limits.get(name)
        if limit is not None:
            if qty != limit and not is_overcommit_allowed(name):
                raise _invalid(req_path, qty, f"must be equal to {name} limit of {limit}")
            if qty > limit:
                raise _invalid(req_path, qty, f"must be less than or equal to {name} limit of {limit}")
        elif not is_overcommit_allowed(name):
            raise _required(lim_path, "Limit must be set for non overcommitable resources")
        if is_hugepage_resource(name):
            has_huge = True
            if not _hugepage_divisible(name, qty):
                raise _invalid(_key(req_path, name), qty,
                               f"{qty} is not positive integer multiple of {name}")
        if name in ("cpu", "memory"):
            has_cpu_mem = True
    if has_huge and not has_cpu_mem:
        raise _forbidden(path, "HugePages require cpu or memory")


# --------------------------------------------------------------------------
# pod-level defaulting


def _default_hugepage_pod_limits(
    req: dict[str, Quantity], lim: dict[str, Quantity], aggr_limits: Mapping[str, Quantity]
) -> None:
    """Pod-level hugepage limits from the containers' aggregated hugepage limits,
    unless the pod sets a request or limit for that size."""
    for name, qty in aggr_limits.items():
        if not is_hugepage_resource(name) or name in req:
            continue
        lim.setdefault(name, qty)


def _default_pod_requests(
    req: dict[str, Quantity], lim: Mapping[str, Quantity], aggr_requests: Mapping[str, Quantity]
) -> None:
    """Pod-level requests: aggregated container requests for cpu/memory, then
    the pod-level limit for what is still missing."""
    for name, qty in aggr_requests.items():
        if (name not in req and is_supported_pod_level_resource(name)
                and is_overcommit_allowed(name)):
            req[name] = qty
    for name, qty in lim.items():
        if name not in req and is_supported_pod_level_resource(name):
            req[name] = qty


def _default_pod_limits(
    req: Mapping[str, Quantity],
    lim: dict[str, Quantity],
    aggr_limits: Mapping[str, Quantity],
    containers: Sequence[Container],
) -> None:
    """Pod-level cpu/memory limits when every container has a limit for the
    resource: max(pod-level request, aggregated container limits)."""
    for name, qty in aggr_limits.items():
        if name in lim or not is_supported_pod_level_resource(name):
            continue
        if not is_overcommit_allowed(name):
            continue
        if not all(name in c.limits for c in containers):
            continue
        pod_req = req.get(name)
        lim[name] = pod_req if pod_req is not None and pod_req > qty else qty


def _pod_level_resources(
    raw: Mapping[str, Any],
    init_containers: Sequence[Container],
    containers: Sequence[Container],
    *,
    fix_defaulting: bool,
) -> PodResources:
    path = "spec.resources"
    _unknown_fields(raw, _RESOURCES_FIELDS, path)
    if raw.get("claims"):
        raise _forbidden(_join(path, "claims"), "claims may not be set for Resources at pod-level")
    req = _resource_list(raw.get("requests"), _join(path, "requests"), pod_level=True)
    lim = _resource_list(raw.get("limits"), _join(path, "limits"), pod_level=True)

    aggr_req = aggregate_requests_of(init_containers, containers)
    aggr_lim = aggregate_limits_of(init_containers, containers)
    if req or lim:
        if fix_defaulting:
            # v1.37 (PodLevelResourcesFixDefaulting): defaulted after admission as soon
            # as any pod-level request or limit is set; limits are defaulted too.
            _default_hugepage_pod_limits(req, lim, aggr_lim)
            _default_pod_requests(req, lim, aggr_req)
            _default_pod_limits(req, lim, aggr_lim, (*init_containers, *containers))
        else:
            # Legacy SetDefaults_Pod: requests are defaulted only when pod-level
            # limits exist (defaulted hugepage limits count).
            _default_hugepage_pod_limits(req, lim, aggr_lim)
            if lim:
                _default_pod_requests(req, lim, aggr_req)

    _check_requirements(req, lim, path)

    # validatePodResourceConsistency
    for name, aggregate in sorted(aggr_req.items()):
        if not is_supported_pod_level_resource(name):
            continue
        pod_req = req.get(name)
        if pod_req is not None and pod_req < aggregate:
            raise _invalid(_key(_join(path, "requests"), name), pod_req,
                           f"must be greater than or equal to aggregate container requests of {aggregate}")
    for name, aggregate in sorted(aggr_lim.items()):
        if not is_hugepage_resource(name):
            continue
        pod_lim = lim.get(name)
        if pod_lim is not None and pod_lim < aggregate:
            raise _invalid(_key(_join(path, "limits"), name), pod_lim,
                           f"must be greater than or equal to aggregate container limits of {aggregate}")
    for ctr in containers:
        for name, ctr_lim in ctr.limits.items():
            if not is_supported_pod_level_resource(name):
                continue
            pod_lim = lim.get(name)
            if pod_lim is not None and ctr_lim > pod_lim:
                # Reproduced quirk: upstream builds this path under spec.resources.
                where = _join(_key(f"{path}.containers[{ctr.index}]", name), "limits")
                raise _invalid(where, ctr_lim, f"must be less than or equal to pod limits of {pod_lim}")
    return PodResources(requests=req, limits=lim)


# --------------------------------------------------------------------------
# containers


_CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")


def _parse_container(
    raw: object, path: str, index: int, *, init: bool, restart_rules: bool
) -> Container:
    """One container; ``restart_rules`` is the ``ContainerRestartRules``
    gate (beta, on in v1.37), with which every container may set
    ``restartPolicy`` to Always, Never or OnFailure (an init container is a
    sidecar only with Always)."""
    doc = _mapping(raw, path)
    _unknown_fields(doc, _CONTAINER_FIELDS, path)
    name = _opt_str(doc.get("name"), _join(path, "name"))
    if not name:
        raise _required(_join(path, "name"))
    _check_dns_label(name, _join(path, "name"))

    restart_policy = _opt_str(doc.get("restartPolicy"), _join(path, "restartPolicy"))
    if restart_policy is not None:
        where = _join(path, "restartPolicy")
        if restart_rules:
            # validateContainerRestartPolicy (init containers too, through
            # validateInitContainerRestartPolicy)
            if restart_policy not in _CONTAINER_RESTART_POLICIES:
                raise _unsupported(where, restart_policy, _CONTAINER_RESTART_POLICIES)
        elif not init:
            raise _forbidden(where, "may not be set for non-init containers")
        elif restart_policy != "Always":
            raise _unsupported(where, restart_policy, ("Always",))

    res_path = _join(path, "resources")
    res = _opt_mapping(doc.get("resources"), res_path)
    _unknown_fields(res, _RESOURCES_FIELDS, res_path)
    limits = _resource_list(res.get("limits"), _join(res_path, "limits"), pod_level=False)
    requests = _resource_list(res.get("requests"), _join(res_path, "requests"), pod_level=False)
    # SetDefaults_Pod: a missing request defaults to the limit.
    for key, qty in limits.items():
        requests.setdefault(key, qty)
    _check_requirements(requests, limits, res_path)

    kind: ContainerKind = "app"
    if init:
        kind = "sidecar" if restart_policy == "Always" else "init"
    return Container(
        name=name, kind=kind, requests=requests, limits=limits,
        restart_policy=restart_policy, index=index,
    )


def _decode_quantities(spec: Mapping[str, Any]) -> None:
    """Every quantity of the pod parses (the API server decodes the whole
    request before it validates anything: an unparsable quantity anywhere
    is the answer, whatever else is wrong)."""
    lists: list[tuple[object, str]] = []
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        raw = spec.get(kind)
        if not isinstance(raw, list | tuple):
            continue
        for i, ctr in enumerate(raw):
            res = ctr.get("resources") if isinstance(ctr, Mapping) else None
            if isinstance(res, Mapping):
                base = f"spec.{kind}[{i}].resources"
                lists += [(res.get("limits"), f"{base}.limits"), (res.get("requests"), f"{base}.requests")]
    pod_res = spec.get("resources")
    if isinstance(pod_res, Mapping):
        lists += [(pod_res.get("limits"), "spec.resources.limits"),
                  (pod_res.get("requests"), "spec.resources.requests")]
    lists.append((spec.get("overhead"), "spec.overhead"))
    for raw, path in lists:
        if isinstance(raw, Mapping):
            for name, value in raw.items():
                if isinstance(name, str):
                    _parse_qty(value, _key(path, name))


def _str_map(raw: object, path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in _opt_mapping(raw, path).items():
        if not isinstance(value, str):
            raise InputError(f"must be a string, not {type(value).__name__}", path=_key(path, key))
        out[key] = value
    return out


def parse_pod(doc: Mapping[str, Any], *, gates: FeatureGateView) -> Pod:
    """Parse, default and validate a v1 Pod manifest.

    Raises ``InputError`` whose path is relative to ``doc``. Unknown fields
    of the pod, its metadata, containers and resources are refused (strict
    field validation); other fields are not checked beyond their shape.
    """
    doc = _mapping(doc, "")
    _unknown_fields(doc, _POD_FIELDS, "")
    if isinstance(doc.get("spec"), Mapping):
        _decode_quantities(doc["spec"])
    api_version = doc.get("apiVersion")
    if api_version is not None and api_version != "v1":
        raise _unsupported("apiVersion", api_version, ("v1",))
    kind = doc.get("kind")
    if kind is not None and kind != "Pod":
        raise _unsupported("kind", kind, ("Pod",))

    meta = doc.get("metadata")
    if meta is None:
        raise _required("metadata")
    meta = _mapping(meta, "metadata")
    _unknown_fields(meta, _METADATA_FIELDS, "metadata")
    name = _opt_str(meta.get("name"), "metadata.name")
    if not name:
        raise _required("metadata.name", "name or generateName is required")
    _check_dns_subdomain(name, "metadata.name")
    namespace = _opt_str(meta.get("namespace"), "metadata.namespace") or "default"
    _check_dns_label(namespace, "metadata.namespace")
    uid = _opt_str(meta.get("uid"), "metadata.uid") or derive_pod_uid(namespace, name)
    labels = _str_map(meta.get("labels"), "metadata.labels")
    annotations = _str_map(meta.get("annotations"), "metadata.annotations")

    spec_raw = doc.get("spec")
    if spec_raw is None:
        raise _required("spec")
    spec = _mapping(spec_raw, "spec")
    _check_spec_fields(spec)
    pod_restart = _opt_str(spec.get("restartPolicy"), "spec.restartPolicy")
    # validateRestartPolicy ("" is defaulted to Always before validation)
    if pod_restart and pod_restart not in _POD_RESTART_POLICIES:
        raise _unsupported("spec.restartPolicy", pod_restart, _POD_RESTART_POLICIES)

    restart_rules = gates.enabled("ContainerRestartRules")
    init_containers = tuple(
        _parse_container(raw, f"spec.initContainers[{i}]", i, init=True, restart_rules=restart_rules)
        for i, raw in enumerate(_opt_list(spec.get("initContainers"), "spec.initContainers"))
    )
    raw_containers = _opt_list(spec.get("containers"), "spec.containers")
    if not raw_containers:
        raise _required("spec.containers")
    containers = tuple(
        _parse_container(raw, f"spec.containers[{i}]", i, init=False, restart_rules=restart_rules)
        for i, raw in enumerate(raw_containers)
    )
    # validateContainers, then validateInitContainers: app containers are
    # unique among themselves; an init container may not reuse an app
    # container's name or an earlier init container's.
    seen: set[str] = set()
    for ctr in (*containers, *init_containers):
        if ctr.name in seen:
            where = "spec.initContainers" if ctr.is_init else "spec.containers"
            raise InputError(f"Duplicate value: {_quote(ctr.name)}", path=f"{where}[{ctr.index}].name")
        seen.add(ctr.name)

    ephemeral: list[str] = []
    for i, raw in enumerate(_opt_list(spec.get("ephemeralContainers"), "spec.ephemeralContainers")):
        path = f"spec.ephemeralContainers[{i}]"
        eph = _mapping(raw, path)
        _unknown_fields(eph, _EPHEMERAL_CONTAINER_FIELDS, path)
        eph_name = _opt_str(eph.get("name"), _join(path, "name"))
        if not eph_name:
            raise _required(_join(path, "name"))
        _check_dns_label(eph_name, _join(path, "name"))
        if eph_name in seen:
            raise InputError(f"Duplicate value: {_quote(eph_name)}", path=_join(path, "name"))
        if eph.get("resources"):
            raise _forbidden(_join(path, "resources"), "cannot be set for an Ephemeral Container")
        seen.add(eph_name)
        ephemeral.append(eph_name)

    # validateOverhead: the list is checked as the limits of a container's
    # resources, under that path (spec.overhead.limits[NAME], an upstream quirk)
    overhead = _resource_list(spec.get("overhead"), "spec.overhead.limits", pod_level=False)
    _check_requirements({}, overhead, "spec.overhead")

    resources: PodResources | None = None
    raw_resources = spec.get("resources")
    # dropDisabledPodLevelResources: with the gate off the field never reaches the kubelet.
    if raw_resources is not None and gates.enabled("PodLevelResources"):
        resources = _pod_level_resources(
            _mapping(raw_resources, "spec.resources"),
            init_containers,
            containers,
            fix_defaulting=gates.enabled("PodLevelResourcesFixDefaulting"),
        )

    return Pod(
        uid=uid,
        name=name,
        namespace=namespace,
        init_containers=init_containers,
        containers=containers,
        ephemeral_containers=tuple(ephemeral),
        resources=resources,
        overhead=overhead,
        labels=labels,
        annotations=annotations,
    )

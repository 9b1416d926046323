"""v1 Pod objects: the parts of a Pod the kubelet's resource managers read.

The types of ``k8s.io/api/core/v1`` (``Pod``, ``Container``, the pod-level
``ResourceRequirements`` of KEP-2837) as the kubelet holds them: after the
API server's defaulting and validation. Reading a manifest into them is
``podnuma.api.pod_manifest``; the rules it applies are
``podnuma.api.pod_validation`` and ``podnuma.api.pod_defaults``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

from podnuma.api.quantity import Quantity
from podnuma.buildinfo import ENGINE_COMPILED

try:  # hashlib's SHA-1, without loading hashlib (see derive_pod_uid)
    from _sha1 import sha1 as _sha1  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import sha1 as _sha1

__all__ = [
    "ContainerKind",
    "Container",
    "PodLevelResources",
    "Pod",
    "POD_UID_NAMESPACE",
    "derive_pod_uid",
]

ContainerKind = Literal["init", "sidecar", "app"]

#: Namespace UUID for pods without ``metadata.uid`` (uuid5 of "namespace/name"),
#: as text (``uuid.UUID(POD_UID_NAMESPACE)``: podnuma needs only the text of
#: a UUID, and ``uuid`` imports ``platform``, about 2 ms of start-up)
POD_UID_NAMESPACE = "6f1d5a8e-3c2b-5b7e-9a41-2d0c7e5f9b13"
_POD_UID_NAMESPACE_BYTES = bytes.fromhex(POD_UID_NAMESPACE.replace("-", ""))

_EMPTY: Final[Mapping[str, Quantity]] = MappingProxyType({})


def _frozen(resources: Mapping[str, Quantity]) -> Mapping[str, Quantity]:
    if not resources:
        return _EMPTY
    return MappingProxyType(dict(sorted(resources.items())))


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
    requests: Mapping[str, Quantity]
    limits: Mapping[str, Quantity]
    restart_policy: str | None
    index: int
    # values derived from this (immutable) container, kept by memo()
    _memo: dict[str, Any] | None
    __slots__ = ("name", "kind", "requests", "limits", "restart_policy", "index", "_memo")

    def __init__(
        self,
        name: str,
        kind: ContainerKind,
        requests: Mapping[str, Quantity] = _EMPTY,
        limits: Mapping[str, Quantity] = _EMPTY,
        restart_policy: str | None = None,
        index: int = 0,
    ) -> None:
        # written out, with the comparison and the repr (a ``dataclass``
        # would make them when the module is imported, on every command's
        # start); the mappings are frozen copies
        self.name = name
        self.kind = kind
        self.requests = _frozen(requests)
        self.limits = _frozen(limits)
        self.restart_policy = restart_policy
        self.index = index
        self._memo = None

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(name={self.name!r}, kind={self.kind!r}, "
                f"requests={self.requests!r}, limits={self.limits!r}, "
                f"restart_policy={self.restart_policy!r}, index={self.index!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Container) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.name, self.kind, self.requests, self.limits, self.restart_policy,
                self.index) == (other.name, other.kind, other.requests, other.limits,
                                other.restart_policy, other.index)

    def replace(self, **changes: Any) -> Container:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values: dict[str, Any] = {
            "name": self.name, "kind": self.kind, "requests": self.requests, "limits": self.limits,
            "restart_policy": self.restart_policy, "index": self.index,
        }
        values.update(changes)
        return Container(**values)

    def memo(self) -> dict[str, Any]:
        """A private cache of values derived from this container (it is
        immutable, so they never go stale); keys name the derivation."""
        memo = self._memo
        if memo is None:
            memo = {}
            self._memo = memo
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


class PodLevelResources:
    """``spec.resources`` (KEP-2837) after defaulting; either map may be empty."""

    def __deepcopy__(self, memo: dict[int, object]) -> PodLevelResources:
        return self  # immutable: a copy of a node's state shares its pods

    requests: Mapping[str, Quantity]
    limits: Mapping[str, Quantity]
    __slots__ = ("requests", "limits")

    def __init__(
        self, requests: Mapping[str, Quantity] = _EMPTY, limits: Mapping[str, Quantity] = _EMPTY
    ) -> None:
        # written out, with the comparison and the repr, as Container's
        self.requests = _frozen(requests)
        self.limits = _frozen(limits)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(requests={self.requests!r}, limits={self.limits!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PodLevelResources) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.requests, self.limits) == (other.requests, other.limits)

    def replace(self, **changes: Any) -> PodLevelResources:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values: dict[str, Any] = {"requests": self.requests, "limits": self.limits}
        values.update(changes)
        return PodLevelResources(**values)

    def __hash__(self) -> int:
        return hash((tuple(self.requests.items()), tuple(self.limits.items())))

    def is_empty(self) -> bool:
        return not self.requests and not self.limits


#: the fields of :class:`Pod`, in order (its memo aside)
_POD_FIELDS = (
    "uid", "name", "namespace", "init_containers", "containers", "ephemeral_containers",
    "resources", "overhead", "labels", "annotations",
)


class Pod:
    """A parsed, defaulted and validated v1 Pod.

    ``resources`` is ``None`` when ``spec.resources`` is absent or the
    ``PodLevelResources`` gate is off (the field is then dropped); an empty
    ``PodLevelResources`` when it is present but empty (the QoS computation tells
    the two apart).
    """

    def __deepcopy__(self, memo: dict[int, object]) -> Pod:
        return self  # immutable: a copy of a node's state shares its pods

    uid: str
    name: str
    namespace: str
    init_containers: tuple[Container, ...]
    containers: tuple[Container, ...]
    ephemeral_containers: tuple[str, ...]
    resources: PodLevelResources | None
    overhead: Mapping[str, Quantity]
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    # values derived from this (immutable) pod, kept by memo()
    _memo: dict[str, Any] | None
    __slots__ = (
        "uid", "name", "namespace", "init_containers", "containers", "ephemeral_containers",
        "resources", "overhead", "labels", "annotations", "_memo",
    )

    def __init__(
        self,
        uid: str,
        name: str,
        namespace: str = "default",
        init_containers: tuple[Container, ...] = (),
        containers: tuple[Container, ...] = (),
        ephemeral_containers: tuple[str, ...] = (),
        resources: PodLevelResources | None = None,
        overhead: Mapping[str, Quantity] | None = None,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> None:
        # written out, with the comparison, the repr and replace() (not
        # generated by dataclass: a compiled build runs them natively, and
        # nothing is made when the module is imported). The mappings are
        # frozen copies.
        self.uid = uid
        self.name = name
        self.namespace = namespace
        self.init_containers = init_containers
        self.containers = containers
        self.ephemeral_containers = ephemeral_containers
        self.resources = resources
        self.overhead = _frozen(overhead) if overhead else _EMPTY
        self.labels = MappingProxyType(dict(labels) if labels else {})
        self.annotations = MappingProxyType(dict(annotations) if annotations else {})
        self._memo = None

    def _fields(self) -> tuple[Any, ...]:
        return (self.uid, self.name, self.namespace, self.init_containers, self.containers,
                self.ephemeral_containers, self.resources, self.overhead, self.labels,
                self.annotations)

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(uid={self.uid!r}, name={self.name!r}, "
                f"namespace={self.namespace!r}, init_containers={self.init_containers!r}, "
                f"containers={self.containers!r}, "
                f"ephemeral_containers={self.ephemeral_containers!r}, "
                f"resources={self.resources!r}, overhead={self.overhead!r}, "
                f"labels={self.labels!r}, annotations={self.annotations!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pod) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def replace(self, **changes: Any) -> Pod:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one (without the memo)."""
        values: dict[str, Any] = dict(zip(_POD_FIELDS, self._fields(), strict=True))
        values.update(changes)
        return Pod(**values)

    def memo(self) -> dict[str, Any]:
        """A private cache of values derived from this pod (QoS class,
        aggregated requests...): the pod is immutable, so they never go
        stale. Keys name the derivation and its inputs (gates)."""
        memo = self._memo
        if memo is None:
            memo = {}
            self._memo = memo
        return memo

    def with_identity(self, name: str, uid: str, labels: Mapping[str, str]) -> Pod:
        """This pod under another name, UID and labels (a copy of one
        workload's parse for each of its pods). Every value :meth:`memo`
        keeps is derived from the spec alone, so the copy shares them."""
        return _with_identity(self, name, uid, labels)

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


def _with_identity_init(pod: Pod, name: str, uid: str, labels: Mapping[str, str]) -> Pod:
    copy = Pod(
        uid=uid,
        name=name,
        namespace=pod.namespace,
        init_containers=pod.init_containers,
        containers=pod.containers,
        ephemeral_containers=pod.ephemeral_containers,
        resources=pod.resources,
        overhead=pod.overhead,
        labels=labels,
        annotations=pod.annotations,
    )
    copy._memo = pod.memo()
    return copy


if ENGINE_COMPILED:
    # the constructor, which runs natively

    def _with_identity(pod: Pod, name: str, uid: str, labels: Mapping[str, str]) -> Pod:
        return _with_identity_init(pod, name, uid, labels)

else:
    # Pure Python: the fields are written through their slot descriptors
    # (no call of ``__init__``), and
    # the mappings already frozen in ``pod`` are shared rather than copied
    # again (the copy would equal them). Same fields, same values.
    _set_uid = Pod.__dict__["uid"].__set__
    _set_name = Pod.__dict__["name"].__set__
    _set_namespace = Pod.__dict__["namespace"].__set__
    _set_init_containers = Pod.__dict__["init_containers"].__set__
    _set_containers = Pod.__dict__["containers"].__set__
    _set_ephemeral_containers = Pod.__dict__["ephemeral_containers"].__set__
    _set_resources = Pod.__dict__["resources"].__set__
    _set_overhead = Pod.__dict__["overhead"].__set__
    _set_labels = Pod.__dict__["labels"].__set__
    _set_annotations = Pod.__dict__["annotations"].__set__
    _set_memo = Pod.__dict__["_memo"].__set__
    _new = object.__new__

    def _with_identity_slots(pod: Pod, name: str, uid: str, labels: Mapping[str, str]) -> Pod:
        copy: Pod = _new(Pod)
        _set_uid(copy, uid)
        _set_name(copy, name)
        _set_namespace(copy, pod.namespace)
        _set_init_containers(copy, pod.init_containers)
        _set_containers(copy, pod.containers)
        _set_ephemeral_containers(copy, pod.ephemeral_containers)
        _set_resources(copy, pod.resources)
        _set_overhead(copy, pod.overhead)
        _set_labels(copy, MappingProxyType(dict(labels) if labels else {}))
        _set_annotations(copy, pod.annotations)
        _set_memo(copy, pod.memo())
        return copy

    _with_identity = _with_identity_slots


def derive_pod_uid(namespace: str, name: str) -> str:
    """The stable uid podnuma gives a pod without ``metadata.uid``:
    ``str(uuid.uuid5(uuid.UUID(POD_UID_NAMESPACE), "namespace/name"))``,
    made as uuid5 makes it (the first 16 bytes of the SHA-1 of the
    namespace's bytes and the name's UTF-8, the version and variant bits
    set, written 8-4-4-4-12 in lower-case hex) but with SHA-1 from its own
    module and without the ``uuid`` module (uuid5 imports ``hashlib``, whose
    OpenSSL bindings cost a command about 2 ms of start-up, and ``uuid``
    imports ``platform``)."""
    b = bytearray(_sha1(_POD_UID_NAMESPACE_BYTES + f"{namespace}/{name}".encode()).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x50  # version 5
    b[8] = (b[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

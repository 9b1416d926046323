"""Which containers of a pod are sidecars, and by which rule.

A sidecar is a container that serves the pod's main container(s) rather
than doing the pod's work: the pod-level rewrite (``rewrite.py``) moves
sidecars to the pod shared pool, and every report names the rule that
recognised each one. The rules, first match wins:

1. ``native``: a restartable init container (``restartPolicy: Always``,
   Kubernetes native sidecars).
2. ``--sidecar NAME``: named by the user (``advise --sidecar``, the web
   form's sidecar names).
3. ``annotation podnuma.io/sidecars``: named by the pod's own annotation
   (``podnuma.io/sidecars: "a,b"``).
4. An app container injected by a well-known injector (:data:`INJECTORS`):
   the container has the injector's container name and the pod carries the
   mark the injector leaves on the pods it mutated (an annotation or a
   label). The container name alone is not enough: an app may well call its
   own container ``envoy``.

The injector table is data: each row says where its facts are documented.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from podnuma.api.pod import Pod

__all__ = [
    "ANNOTATION_SIDECARS",
    "INJECTORS",
    "Injector",
    "recognise_sidecars",
    "rule_names",
]

ANNOTATION_SIDECARS = "podnuma.io/sidecars"


#: the fields of :class:`Injector`, in order
_INJECTOR_FIELDS = (
    "name",
    "containers",
    "annotations",
    "labels",
    "annotation_prefixes",
    "source",
)


class Injector:
    """A mutating webhook that adds a sidecar as an app container."""

    name: str
    containers: tuple[str, ...]  # the container names it injects
    annotations: tuple[str, ...]  # any of these pod annotation keys marks an injected pod
    labels: tuple[str, ...]  # ... or any of these pod label keys
    annotation_prefixes: tuple[str, ...]  # ... or any annotation key with this prefix
    source: str  # where the facts are documented

    def __init__(
        self,
        name: str,
        containers: tuple[str, ...],
        annotations: tuple[str, ...] = (),
        labels: tuple[str, ...] = (),
        annotation_prefixes: tuple[str, ...] = (),
        source: str = '',
    ) -> None:
        # written out, with the comparison, the hash, the repr and replace() (a
        # ``dataclass`` would make them when the module is imported, on every
        # command's start)
        self.name = name
        self.containers = containers
        self.annotations = annotations
        self.labels = labels
        self.annotation_prefixes = annotation_prefixes
        self.source = source

    def _fields(self) -> tuple[Any, ...]:
        return (self.name, self.containers, self.annotations, self.labels,
                self.annotation_prefixes, self.source)

    def __repr__(self) -> str:
        values = ", ".join(f"{n}={v!r}" for n, v in zip(_INJECTOR_FIELDS, self._fields(), strict=True))
        return f"{type(self).__qualname__}({values})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Injector) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def replace(self, **changes: Any) -> Injector:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values: dict[str, Any] = dict(zip(_INJECTOR_FIELDS, self._fields(), strict=True))
        values.update(changes)
        return Injector(**values)

    def marks(self, pod: Pod) -> str | None:
        """The mark of this injector the pod carries (``annotation KEY`` /
        ``label KEY``), or None."""
        for key in self.annotations:
            if key in pod.annotations:
                return f"annotation {key}"
        for key in self.labels:
            if key in pod.labels:
                return f"label {key}"
        for prefix in self.annotation_prefixes:
            for key in sorted(pod.annotations):
                if key.startswith(prefix):
                    return f"annotation {key}"
        return None


#: Well-known sidecar injectors (container names and the marks they leave).
INJECTORS: tuple[Injector, ...] = (
    Injector(
        "istio", ("istio-proxy",), annotations=("sidecar.istio.io/status",),
        source="istio.io: the sidecar injector records what it injected in sidecar.istio.io/status",
    ),
    Injector(
        "linkerd", ("linkerd-proxy",), annotations=("linkerd.io/proxy-version",),
        source="linkerd.io: the proxy injector sets linkerd.io/proxy-version on injected pods",
    ),
    Injector(
        "vault", ("vault-agent",), annotations=("vault.hashicorp.com/agent-inject-status",),
        source="developer.hashicorp.com vault/docs/platform/k8s/injector/annotations: "
        "agent-inject-status is set to injected after a mutation",
    ),
    Injector(
        "dapr", ("daprd",), annotations=("dapr.io/enabled", "dapr.io/app-id"),
        source="docs.dapr.io concepts/dapr-services/sidecar-injector: pods annotated dapr.io/enabled "
        "get a daprd container",
    ),
    Injector(
        "consul", ("consul-dataplane",),
        annotations=("consul.hashicorp.com/connect-inject-status",),
        source="developer.hashicorp.com consul/docs/k8s: connect-inject-status: injected, "
        "the consul-dataplane sidecar",
    ),
    Injector(
        "aws-app-mesh", ("envoy",), annotation_prefixes=("appmesh.k8s.aws/",),
        source="aws.github.io/aws-app-mesh-controller-for-k8s/reference/injector: the envoy sidecar, "
        "appmesh.k8s.aws/ annotations",
    ),
    Injector(
        "opentelemetry", ("otc-container",),
        annotations=("sidecar.opentelemetry.io/inject",), labels=("sidecar.opentelemetry.io/injected",),
        source="opentelemetry-operator: sidecar.opentelemetry.io/inject requests the otc-container "
        "collector sidecar, the operator labels the pod sidecar.opentelemetry.io/injected",
    ),
)


def _name_list(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def recognise_sidecars(pod: Pod, named: Collection[str] = ()) -> dict[str, str]:
    """Container name -> the rule that made it a sidecar (module doc), in
    the pod's container order. ``named``: the names given by the user
    (names that are not containers of the pod are ignored here; the caller
    reports them)."""
    annotated = set(_name_list(pod.annotations.get(ANNOTATION_SIDECARS, "")))
    user = set(named)
    out: dict[str, str] = {}
    for c in pod.init_containers:
        if c.is_sidecar:  # a regular init container runs before the others, never beside them
            out[c.name] = "native sidecar (restartPolicy: Always)"
    for c in pod.containers:
        if c.name in user:
            out[c.name] = f"--sidecar {c.name}"
            continue
        if c.name in annotated:
            out[c.name] = f"annotation {ANNOTATION_SIDECARS}"
            continue
        for inj in INJECTORS:
            if c.name not in inj.containers:
                continue
            mark = inj.marks(pod)
            if mark is not None:
                out[c.name] = f"{inj.name} injector (container {c.name}, {mark})"
                break
    return out


def rule_names(rules: Mapping[str, str]) -> str:
    """``a (rule), b (rule)`` for reports."""
    return ", ".join(f"{n} ({r})" for n, r in rules.items())

"""``ValidatePodCreate`` as the kubelet runs it on a static pod.

Mirrors, for the fields a static-pod manifest plausibly gets wrong,
k8s.io/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``
(``ValidatePodCreate``, ``validatePodMetadataAndSpec``, ``ValidatePodSpec``,
``ValidateVolumes``, ``validateContainers``, ``validateInitContainers``,
``validateContainerCommon``, ``validateContainerPorts``, ``ValidateEnv``,
``ValidateEnvFrom``, ``ValidateVolumeMounts``, ``validatePullPolicy``,
``validateRestartPolicy``,
``validateDNSPolicy``, ``validatePodHostNetworkDeps``, ``validateSchedulingGates``,
``checkHostPortConflicts``, ``validateContainersOnlyForPod``,
``validateEphemeralContainers`` with ``validateFieldAllowList``; the pod's
``resourceClaims``, pod-level ``resources`` and ``overhead`` are
``podnuma.agent.validation_resources``), the object
metadata rules of k8s.io/apimachinery v0.37.2
``pkg/api/validation/objectmeta.go`` and
``pkg/apis/meta/v1/validation/validation.go`` (``ValidateLabels``), and the
name rules of ``pkg/util/validation/validation.go`` and
``pkg/api/validate/content/kube.go`` (DNS labels and subdomains, qualified
names, label values, port names and numbers, relaxed environment variable
names). The texts are those of ``pkg/util/validation/field``. Volume
source details, mount and device details, restart rules, readiness gates,
``hostnameOverride``, ``generateName``, owner references, finalizers and
the deletion-cost annotation are ``podnuma.agent.validation_volumes``,
called here where Go's order puts them.

The kubelet validates the pod after its file source has defaulted it:
the name already carries ``-NODE``, the namespace is ``default`` when
empty, ``spec.nodeName`` is the node's name; the v1 defaults fill an empty
``restartPolicy``, ``dnsPolicy``, ``imagePullPolicy``,
``terminationMessagePolicy``, a port's ``protocol`` and, with
``hostNetwork``, a port's ``hostPort``. It reports every error it finds, in
its order, as one message: ``invalid pod: [E1 E2 ...]``.

``go_decode`` is Go's JSON decoder for the fields read here (and those
``podnuma.agent.staticpod`` reads, every field of a container among them):
a value of the wrong type is refused in its words, a null element of a
list is its type's zero value; a JSON object giving a key more than once
(``RepeatedKeys``) has every occurrence decoded in turn (their errors
count) and ends as Go leaves it (``settled``); the checks
below then skip what is not of its type. A quantity that does not parse
(container resources, overhead, pod-level resources, an ``emptyDir``
size, a divisor, a claim template's resources) is the decoder's refusal,
raised at once (``Quantity.UnmarshalJSON`` fails: it wins over a type
error met before it); the pod is then not validated.
Messages quote strings as Go's ``%q`` does (``_q``; printable as Python's
Unicode 14 tables say, Go's are 15.0), a value of a named Go string type
(``core.RestartPolicy``, ``core.Protocol``...) as ``encoding/json`` writes
it (``_json_str``: ``<`` as ``\\u003c``); Go's ``strings.ToLower`` is
``go_lower``. A ``metav1.Time`` (``creationTimestamp``, a managed field's
``time``) decodes itself: ``go_rfc3339_error`` is Go's ``time.Parse`` with
``time.RFC3339`` (k8s.io/apimachinery ``pkg/apis/meta/v1/time.go``, Go's
``time/format.go``). The validation options the kubelet derives from its
feature gates are ``validation_kit.PodValidationOptions``. The
annotations' total size counts the
``kubernetes.io/config.hash: UID`` annotation the file source has added.
What is not checked here is
listed in ``podnuma.agent.staticpod``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from podnuma.agent import validation_container as container
from podnuma.agent import validation_resources as resources_
from podnuma.agent import validation_scheduling as scheduling
from podnuma.agent import validation_security as security
from podnuma.agent import validation_volumes as volumes_
from podnuma.agent.validation_kit import (
    NulledQuantity,
    PodValidationOptions,
    _Errors,
    _Gates,
    _get,
    _int,
    _labels,
    _map,
    _range_error,
    _seq,
    _str,
    env_name_errors,
    go_lower,
    validation_options,
)
from podnuma.agent.validation_service_account import check_service_account_name
from podnuma.api.pod_schema import _G_CONTAINER, _G_POD, _Go  # noqa: F401 (the agent's names)
from podnuma.api.pod_validation import (
    dns_label_errors,
    dns_subdomain_errors,
    go_len,
    port_name_errors,
    qualified_name_errors,
)
from podnuma.api.quantity import ERR_FORMAT_WRONG, QuantityError, quantity_from_manifest
from podnuma.errors import InputError
from podnuma.golang.jsonnumbers import JSONFloat
from podnuma.golang.rfc3339 import parse_error as go_rfc3339_error

__all__ = ["GoDecodeError", "RepeatedKeys", "StaticPodErrors", "go_decode", "settled", "validate_static_pod"]

_MAX_INT32 = 2**31 - 1
_CONFIG_HASH = "kubernetes.io/config.hash"

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_TERMINATION_POLICIES = ("File", "FallbackToLogsOnError")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")


class StaticPodErrors(InputError):
    """The kubelet's refusal of a static pod: every field error, in order
    (``errors``: ``(path, message)``), as one ``invalid pod: [...]``;
    ``suffix``: podnuma's pointer to the first error's line."""

    def __init__(self, errors: list[tuple[str, str]], *, file: str | None = None, suffix: str = "") -> None:
        self.errors = errors
        text = " ".join(f"{p}: {m}" for p, m in errors)
        super().__init__(f"invalid pod: [{text}]{suffix}", file=file)


# ---------------------------------------------------------------- wording


def _quantities_parse(spec: Mapping[str, Any]) -> bool:
    """Every quantity of the containers' resources parses (else the kubelet
    refuses the file before it validates anything)."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in _seq(spec, key):
            res = _map(c, "resources")
            for which in ("limits", "requests"):
                for value in _map(res, which).values():
                    if isinstance(value, bool) or not isinstance(value, str | int | float | type(None)):
                        return False
                    try:
                        quantity_from_manifest(value)
                    except QuantityError:
                        return False
    return True


class RepeatedKeys(dict[str, Any]):
    """A JSON object that gives a key more than once: the mapping holds
    each key's value as Go's decoder leaves it (an object merged into the
    earlier one, anything else replacing it), ``pairs`` every key-value
    pair as written, which the decoder meets in turn (each occurrence is
    decoded: its errors count)."""

    __slots__ = ("pairs",)

    def __init__(self, merged: Mapping[str, Any], pairs: list[tuple[str, Any]]) -> None:
        super().__init__(merged)
        self.pairs = pairs


def occurrences(value: Mapping[str, Any], from_json: bool = True) -> list[tuple[str, Any]]:
    """The key-value pairs of an object in the order Go's decoder meets
    them: every occurrence of a repeated key (JSON), else the keys as
    written (JSON) or sorted (YAML, which the kubelet turns into JSON with
    sorted keys first)."""
    if isinstance(value, RepeatedKeys):
        return list(value.pairs)
    return [(k, value[k]) for k in (value if from_json else sorted(value))]


#: the plain (not pointer) scalar fields are most: these are pointers, which a
#: ``null`` sets back to nil (k8s.io/api v0.37.2 core/v1, metav1's
#: ``OwnerReference``, ``ObjectMeta``: every pointer-to-scalar field of a
#: ``v1.Pod``, as Go's reflection lists them), by the
#: struct that declares them
_POINTER_SCALARS: dict[str, tuple[str, ...]] = {
    "AppArmorProfile": ("localhostProfile",),
    "AzureDiskVolumeSource": ("cachingMode", "fsType", "kind", "readOnly"),
    "CSIVolumeSource": ("fsType", "readOnly"),
    "ClusterTrustBundleProjection": ("name", "optional", "signerName", "user"),
    "ConfigMapEnvSource": ("optional",),
    "ConfigMapKeySelector": ("optional",),
    "ConfigMapProjection": ("optional",),
    "ConfigMapVolumeSource": ("defaultMode", "defaultUser", "optional"),
    "Container": ("restartPolicy",),
    "ContainerStatus": ("started", "stopSignal"),
    "DownwardAPIVolumeFile": ("mode", "user"),
    "DownwardAPIVolumeSource": ("defaultMode", "defaultUser"),
    "EmptyDirVolumeSource": ("mode",),
    "EphemeralContainerCommon": ("restartPolicy",),
    "EvictionResponder": ("priority",),
    "FCVolumeSource": ("lun",),
    "FileKeySelector": ("optional",),
    "GRPCAction": ("mode", "service"),
    "HTTPGetAction": ("protocol",),
    "HostPathVolumeSource": ("type",),
    "ISCSIVolumeSource": ("initiatorName",),
    "KeyToPath": ("mode", "user"),
    "Lifecycle": ("stopSignal",),
    "ObjectMeta": ("deletionGracePeriodSeconds",),
    "OwnerReference": ("blockOwnerDeletion", "controller"),
    "PersistentVolumeClaimSpec": ("storageClassName", "volumeAttributesClassName", "volumeMode"),
    "PodCertificateProjection": ("maxExpirationSeconds", "user"),
    "PodDNSConfigOption": ("value",),
    "PodResourceClaim": ("resourceClaimName", "resourceClaimTemplateName"),
    "PodResourceClaimStatus": ("resourceClaimName",),
    "PodSchedulingGroup": ("podGroupName",),
    "PodSecurityContext": ("fsGroup", "fsGroupChangePolicy", "runAsGroup", "runAsNonRoot", "runAsUser", "seLinuxChangePolicy", "supplementalGroupsPolicy"),
    "PodSpec": ("activeDeadlineSeconds", "automountServiceAccountToken", "enableServiceLinks", "hostUsers", "hostnameOverride", "preemptionPolicy", "priority", "runtimeClassName", "setHostnameAsFQDN", "shareProcessNamespace", "terminationGracePeriodSeconds"),
    "Probe": ("terminationGracePeriodSeconds",),
    "ProjectedVolumeSource": ("defaultMode", "defaultUser"),
    "ResourceHealth": ("message",),
    "SeccompProfile": ("localhostProfile",),
    "SecretEnvSource": ("optional",),
    "SecretKeySelector": ("optional",),
    "SecretProjection": ("optional",),
    "SecretVolumeSource": ("defaultMode", "defaultUser", "optional"),
    "SecurityContext": ("allowPrivilegeEscalation", "privileged", "procMount", "readOnlyRootFilesystem", "runAsGroup", "runAsNonRoot", "runAsUser"),
    "ServiceAccountTokenProjection": ("expirationSeconds", "user"),
    "Toleration": ("tolerationSeconds",),
    "TopologySpreadConstraint": ("minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy"),
    "TypedLocalObjectReference": ("apiGroup",),
    "TypedObjectReference": ("apiGroup", "namespace"),
    "VolumeMount": ("mountPropagation", "recursiveReadOnly"),
    "VolumeMountStatus": ("recursiveReadOnly",),
    "WindowsSecurityContextOptions": ("gmsaCredentialSpec", "gmsaCredentialSpecName", "hostProcess", "runAsUserName"),
}
#: for a field podnuma's schema does not type: the JSON names that are a
#: pointer to a scalar wherever k8s.io/api v0.37.2 core/v1 declares them (a
#: ``null`` sets them back to nil); any other scalar a ``null`` leaves as it
#: was (a name that is a pointer in some structs only, ``readOnly``,
#: ``fsType``, ``user``, is a plain value in the volume sources left untyped)
_UNTYPED_POINTERS = frozenset({
    "activeDeadlineSeconds", "allocateLoadBalancerNodePorts", "allowPrivilegeEscalation", "apiGroup",
    "appProtocol", "automountServiceAccountToken", "cachingMode", "capacity",
    "currentVolumeAttributesClassName", "defaultMode", "defaultUser", "enableServiceLinks",
    "endpointsNamespace", "expirationSeconds", "fsGroup", "fsGroupChangePolicy", "gmsaCredentialSpec",
    "gmsaCredentialSpecName", "hostProcess", "hostUsers", "hostnameOverride", "immutable", "initiatorName",
    "internalTrafficPolicy", "ipFamilyPolicy", "ipMode", "limitBytes", "loadBalancerClass",
    "localhostProfile", "maxExpirationSeconds", "minDomains", "mode", "mountPropagation",
    "nodeAffinityPolicy", "nodeTaintsPolicy", "optional", "podGroupName", "preemptionPolicy", "priority",
    "privileged", "procMount", "readOnlyRootFilesystem", "recursiveReadOnly", "recursiveReadOnlyMounts",
    "resourceClaimTemplateName", "runAsGroup", "runAsNonRoot", "runAsUser", "runAsUserName",
    "runningInUserNamespace", "runtimeClassName", "seLinuxChangePolicy", "secretNamespace", "service",
    "setHostnameAsFQDN", "shareProcessNamespace", "sinceSeconds", "started", "stopSignal", "stream",
    "supplementalGroupsPolicy", "tailLines", "terminationGracePeriodSeconds", "tolerationSeconds",
    "trafficDistribution", "userNamespaces", "volumeAttributesClassName", "volumeMode",
})
#: the struct fields held by value (not through a pointer): a ``null`` leaves them as they are
_VALUE_STRUCTS = frozenset({
    "Pod.metadata", "Pod.spec", "Container.resources", "EphemeralContainerCommon.resources",
    "PersistentVolumeClaimTemplate.metadata", "PersistentVolumeClaimTemplate.spec",
    "PersistentVolumeClaimSpec.resources",
    # (the scheduling terms a weighted term holds by value)
    "PreferredSchedulingTerm.preference", "WeightedPodAffinityTerm.podAffinityTerm",
})


def _null_keeps(t: _Go, owner: str, key: str) -> bool:
    """A ``null`` for ``key`` of the struct ``owner`` leaves the field as it
    was (Go's decoder: only a pointer, map, slice or interface is set to
    nil; a plain string, number, bool or struct is left alone)."""
    if t.kind == "struct":
        return f"{owner}.{key}" in _VALUE_STRUCTS
    return t.kind in ("string", "int", "bool", "intstr") and key not in _POINTER_SCALARS.get(owner, ())


class IntOrStringInt(int):
    """An ``IntOrString`` of the int type whose string half an earlier
    occurrence set (``rest``): Go's unmarshaller sets the type and the half
    it reads, and leaves the other half (the hash sees both)."""

    rest: str = ""


class IntOrStringText(str):
    """An ``IntOrString`` of the string type whose int half an earlier
    occurrence set (``rest``)."""

    rest: int = 0


def _int_or_string(number: int | None, text: str | None, as_int: bool) -> Any:
    if as_int:
        if not text:
            return number or 0
        i = IntOrStringInt(number or 0)
        i.rest = text
        return i
    if not number:
        return text or ""
    s = IntOrStringText(text or "")
    s.rest = number
    return s


def int_or_string_form(v: Any) -> Any:
    """How the kubelet's hash tells an IntOrString with a leftover half from
    the plain one."""
    if isinstance(v, IntOrStringInt):
        return f"intstr:int:{int(v)}:{v.rest}"
    if isinstance(v, IntOrStringText):
        return f"intstr:string:{v.rest}:{str(v)}"
    return v


def settled(value: Mapping[str, Any], t: _Go | None = None) -> dict[str, Any]:
    """The object ``value`` (occurrences of a repeated key in turn) as Go's
    decoder leaves it in ``t`` (``None``: a type podnuma does not know the
    fields of): a later object decoded into the earlier struct or map (a
    struct's fields merged, a map's entries replaced one by one), a later
    array decoded into the earlier slice's elements (:func:`_into_slice`),
    a ``null`` setting a pointer, map or slice to nil, an ``IntOrString`` to
    an int with its int half kept, a value quantity's amount to zero with
    its text kept (:class:`NulledQuantity`), and leaving any other value as
    it was (an untyped scalar unless ``_UNTYPED_POINTERS`` names it), a
    value of either type given to an ``IntOrString`` keeping the other
    half, anything else replacing the earlier value."""
    state = _Settling(t)
    state.feed(occurrences(value))
    return state.out


#: a count of the values :class:`_Settling` meets (one per key-value pair
#: fed, per element of an array decoded into a slice, per element or entry
#: copied): the tests check it grows linearly with the input
WORK = [0]


class _Settling:
    """The state ``settled`` keeps for one object while the occurrences of
    its keys are fed in turn: the value so far of each key, and, for a key
    whose value this state built (a merged struct, a merged map, a slice's
    backing elements), that value's own state, so a later occurrence is
    merged into it in place (each value of the input met once: a repeated
    key costs what its occurrences hold, not what the earlier ones did)."""

    __slots__ = ("backing", "elems", "last_int", "last_str", "maps", "name", "out", "subs", "t")

    def __init__(self, t: _Go | None) -> None:
        self.t = t
        self.name = t.name.removeprefix("v1.") if t is not None else ""
        self.out: dict[str, Any] = {}
        self.last_int: dict[str, int] = {}
        self.last_str: dict[str, str] = {}
        # (a slice's elements past its length, kept for reuse; the states of its merged elements)
        self.backing: dict[str, list[Any]] = {}
        self.elems: dict[str, list[_Settling | None]] = {}
        self.subs: dict[str, _Settling] = {}  # (a merged struct's state: its ``out`` is the value)
        self.maps: dict[str, dict[str, Any]] = {}  # (a merged map this state owns)

    def feed(self, pairs: list[tuple[str, Any]]) -> None:
        t, name, out = self.t, self.name, self.out
        last_int, last_str, backing = self.last_int, self.last_str, self.backing
        WORK[0] += len(pairs)
        for k, v in pairs:
            if isinstance(v, int) and not isinstance(v, bool):
                last_int[k] = v
                if isinstance(v, IntOrStringInt):
                    last_str[k] = v.rest
            elif isinstance(v, str):
                last_str[k] = v
                if isinstance(v, IntOrStringText):
                    last_int[k] = v.rest
            field = t.fields.get(k) if t is not None and t.kind == "struct" else None
            ft = field[0] if field is not None else (t.elem if t is not None and t.kind == "map" else None)
            owner = field[1].split(".")[0] if field is not None and "." in field[1] else name
            prev = out.get(k)
            if v is None and k in out and ft is not None and ft.kind == "intstr" and field is not None:
                # (an IntOrString held by value: its own unmarshaller meets the
                # null, makes it an int and leaves the int half as the earlier
                # occurrences set it, 0 unless one of them was a number)
                out[k] = _int_or_string(last_int.get(k), last_str.get(k), True)
            elif v is None and ft is not None and ft.kind == "quantity" and field is not None \
                    and owner != "EmptyDirVolumeSource" and (isinstance(prev, str) or isinstance(prev, int)
                                                             and not isinstance(prev, bool)):
                # (the value quantities podnuma types: a divisor; not the pointer sizeLimit)
                out[k] = prev if isinstance(prev, NulledQuantity) else NulledQuantity(prev)
            elif v is None:
                if ft is None and k in out and prev is not None and not isinstance(prev, Mapping | list):
                    if k in _UNTYPED_POINTERS:
                        out[k] = None
                elif not (k in out and ft is not None and field is not None and _null_keeps(ft, owner, k)):
                    out[k] = None
            elif isinstance(v, list) and ft is not None and ft.kind == "slice" and ft.elem is not None \
                    and isinstance(prev, list):
                # (a later array decoded into the slice the earlier one left)
                if k not in backing:
                    old = prev.backing if isinstance(prev, _Backed) else prev
                    WORK[0] += len(old)
                    backing[k] = list(old)
                    self.elems[k] = [None] * len(old)
                backing[k] = _into_slice(backing[k], v, ft.elem, self.elems[k])
                if not backing[k]:
                    self.elems[k] = []
                WORK[0] += len(v)
                out[k] = _Backed(backing[k][:len(v)], backing[k])
                continue
            elif isinstance(prev, Mapping) and isinstance(v, Mapping) and (ft is None or ft.kind in ("struct", "map")):
                if ft is not None and ft.kind == "map":
                    merged = self.maps.get(k)
                    if merged is None or merged is not prev:
                        WORK[0] += len(prev)
                        merged = self.maps[k] = dict(prev)
                    news = occurrences(v)
                    WORK[0] += len(news)
                    merged.update(news)
                    out[k] = merged
                else:
                    out[k] = _merge_into(self.subs, k, prev, v, ft)
            elif ft is not None and ft.kind == "intstr" and isinstance(v, int | str) and not isinstance(v, bool):
                out[k] = _int_or_string(last_int.get(k), last_str.get(k), isinstance(v, int))
            else:
                out[k] = v
            backing.pop(k, None)
            self.elems.pop(k, None)


def _merge_into(states: Any, at: Any, prev: Mapping[str, Any], v: Mapping[str, Any],
                t: _Go | None) -> dict[str, Any]:
    """The object ``v`` decoded into the struct ``prev`` (the value at
    ``at``): merged in place into the state kept at ``states[at]`` when
    ``prev`` is that state's value, else into a new state that meets
    ``prev``'s fields first."""
    state = states.get(at) if isinstance(states, dict) else states[at]
    if state is None or state.out is not prev:
        state = _Settling(t)
        state.feed(occurrences(prev))
        states[at] = state
    state.feed(occurrences(v))
    return state.out


class _Backed(list[Any]):
    """A slice ``settled`` built from a repeated array, with its backing
    elements (past its length too), for a later array decoded into it
    (also one inside a list element merged again)."""

    def __init__(self, items: list[Any], backing: list[Any]) -> None:
        super().__init__(items)
        self.backing = backing


def _into_slice(old: list[Any], new: list[Any], elem: _Go, states: list[_Settling | None]) -> list[Any]:
    """The array ``new`` decoded into a slice whose backing elements are
    ``old`` (the standard decoder's array case, which sigs.k8s.io/json
    keeps: it does not clear the slice; it decodes element i into the
    slice's element i, extending the length over the old backing array
    while the capacity lasts, then cuts the length to the new count; an
    empty array makes a fresh empty slice). Decoding into an element
    merges an object into the struct there, leaves the element as it was
    for a ``null`` (neither a struct nor a scalar is a pointer), replaces a
    scalar. Returned: the new elements, then the old ones past them (still
    in the backing array, met again by a third, longer array). ``old`` (the
    caller's own list) is changed in place; ``states``, beside it, holds
    the state of each element merged so far."""
    if not new:
        return []
    WORK[0] += len(new)
    for i, v in enumerate(new):
        if i >= len(old):
            old.append(v)
            states.append(None)
            continue
        was = old[i]
        if v is None:
            continue
        if elem.kind == "struct" and isinstance(v, Mapping) and isinstance(was, Mapping):
            old[i] = _merge_into(states, i, was, v, elem)
        else:
            old[i] = v
            states[i] = None
    return old


class GoDecodeError(InputError):
    """What Go's JSON decoder refuses (``json: cannot unmarshal …``), at
    ``path`` (podnuma's field path, for the line)."""


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _go_float(value: float) -> str:
    """A float64 as Go's ``json.Marshal`` writes it (what the kubelet's
    YAML-to-JSON step hands its decoder)."""
    if value != value or value in (float("inf"), float("-inf")):
        return repr(value)
    if value == int(value) and (value == 0 or 1e-6 <= abs(value) < 1e21):
        return str(int(value))
    text = repr(value)
    if 1e-6 <= abs(value) < 1e21:
        return text if "e" not in text else format(value, "f").rstrip("0").rstrip(".")
    mantissa, _, exp = text.partition("e")
    sign, digits = (exp[0], exp[1:]) if exp[:1] in "+-" else ("+", exp)
    digits = digits.lstrip("0")
    return f"{mantissa.removesuffix('.0')}e{sign}{digits.rjust(2, '0') if sign == '+' else digits}"


def _go_number(value: Any, t: _Go, from_json: bool) -> tuple[int | None, str]:
    """The integer Go decodes from the number ``value``, or ``None`` and
    the number as the decoder's error shows it."""
    if isinstance(value, int):
        text = str(value)
    elif from_json:
        # (a JSON number with a fraction or exponent, as written: Go quotes
        # the number's text, "number 1e3")
        text = value.text if isinstance(value, JSONFloat) else repr(value)
    else:
        text = _go_float(value)
    try:
        n = int(text)
    except ValueError:
        return None, text
    limit = 1 << (t.bits - 1)
    return (n, text) if -limit <= n < limit else (None, text)


#: while a JSON pod is decoded (``memo``): each object or array decoded so far (by its
#: identity and its type), with what it decoded to. A repeated key's
#: occurrences are decoded in turn, then the value they settle to, which
#: holds the same objects: met again, they are not decoded again (else each
#: level of repeated keys would double the work below it). A JSON document
#: holds each object once (YAML, whose aliases share one, never repeats a
#: key); one per thread
_DECODING = threading.local()


def _go_decode(value: Any, t: _Go, where: tuple[str, str], path: str, from_json: bool,
               saved: list[GoDecodeError]) -> Any:
    """:func:`_go_decode_value`, an object or array decoded already (into
    the same type) answered from ``_DECODING.memo`` (its errors were noted the
    first time)."""
    memo: dict[tuple[int, int], tuple[Any, Any]] | None = getattr(_DECODING, "memo", None)
    if memo is None or not isinstance(value, dict | list) or t.kind not in ("struct", "map", "slice"):
        return _go_decode_value(value, t, where, path, from_json, saved)
    key = (id(value), id(t))
    hit = memo.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    got = _go_decode_value(value, t, where, path, from_json, saved)
    memo[key] = (value, got)
    return got


def _go_decode_value(value: Any, t: _Go, where: tuple[str, str], path: str, from_json: bool,
                     saved: list[GoDecodeError]) -> Any:
    """``value`` decoded into ``t`` as Go decodes it (a null leaves the zero
    value: kept as ``None``; a null element of a list, or value of a map,
    is the element type's zero value); ``where``: the error context of the
    field holding ``value`` (its struct's name, the JSON names down to it).
    A value of the wrong type is noted in ``saved`` and left as it is (Go's
    decoder keeps its first such error and goes on); one that an
    ``IntOrString`` refuses is raised at once (its own ``UnmarshalJSON``
    fails: the decoding stops there, that error wins over the saved one)."""
    if value is None or t.kind == "any":
        return value
    if t.kind == "quantity":
        _go_quantity(value, path)
        return value
    if t.kind == "time":
        # (metav1.Time.UnmarshalJSON: a string, then time.Parse(RFC3339);
        # its error, in its words, ends the decoding)
        if not isinstance(value, str):
            raise GoDecodeError(f"json: cannot unmarshal {_json_kind(value)} into Go struct field "
                                f"{where[0]}.{where[1]} of type string", path=path)
        why = go_rfc3339_error(value)
        if why:
            raise GoDecodeError(why, path=path)
        return value
    shown = _json_kind(value)
    if isinstance(value, IntOrStringInt | IntOrStringText):
        return value  # (settled: both halves checked when first met)
    if t.kind in ("int", "intstr") and shown == "number":
        n, text = _go_number(value, t, from_json)
        if n is not None:
            return n
        shown = f"number {text}"
    elif t.kind in ("string", "intstr") and shown == "string" or t.kind == "bool" and shown == "bool":
        return value
    elif t.kind == "slice" and shown == "array":
        assert t.elem is not None
        return [_go_decode(_zero(v, t.elem), t.elem, where, f"{path}[{i}]", from_json, saved)
                for i, v in enumerate(value)]
    elif t.kind == "map" and shown == "object":
        assert t.elem is not None
        got = {k: _go_decode(_zero(v, t.elem), t.elem, where, f"{path}[{k}]", from_json, saved)
               for k, v in occurrences(value, from_json)}
        if isinstance(value, RepeatedKeys):  # (each occurrence decoded in turn above; the last stays)
            return _go_decode(settled(value, t), t, where, path, from_json, [])
        return {k: got[k] for k in value}
    elif t.kind == "struct" and shown == "object":
        # (fields in the order Go's decoder meets them: the document's for
        # JSON; sorted for YAML, which the kubelet turns into JSON first)
        # (a repeated key: each occurrence decoded in turn, into the value
        # the earlier ones left; its errors count, the last value stays)
        got = {}
        for k, v in occurrences(value, from_json):
            field = t.fields.get(k)
            got[k] = v if field is None else _go_decode(
                v, field[0], (t.name.removeprefix("v1."), f"{where[1]}.{field[1]}".lstrip(".")),
                f"{path}.{k}".lstrip("."), from_json, saved)
        if isinstance(value, RepeatedKeys):
            return _go_decode(settled(value, t), t, where, path, from_json, [])
        return {k: got[k] for k in value}
    err = GoDecodeError(
        f"json: cannot unmarshal {shown} into Go struct field {where[0]}.{where[1]} of type {t.name}",
        path=path)
    if t.kind == "intstr":
        raise err
    saved.append(err)
    return value


def _go_quantity(value: Any, path: str) -> None:
    """``Quantity.UnmarshalJSON``: the JSON text of ``value`` (a string
    without its quotes) parsed; what does not parse is the decoder's error,
    raised at once."""
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise QuantityError(ERR_FORMAT_WRONG)  # (true, {...}, [...]: no quantity's text)
        quantity_from_manifest(value)
    except QuantityError as e:
        raise GoDecodeError(str(e), path=path) from None


def _zero(value: Any, t: _Go) -> Any:
    """A null element: Go's zero value of its type."""
    if value is not None:
        return value
    return {"struct": {}, "string": "", "int": 0, "bool": False}.get(t.kind)


def _check_scheduling_group(errs: Any, spec: Mapping[str, Any]) -> None:
    """``validateSchedulingGroup`` (``validation.go``): a group needs a
    ``podGroupName`` (a nil one is ``Invalid value: null``), a DNS
    subdomain; then no ``evictionResponders`` beside it."""
    group = spec.get("schedulingGroup")
    if not isinstance(group, Mapping):
        return
    name = group.get("podGroupName")
    path = "spec.schedulingGroup.podGroupName"
    if not isinstance(name, str):
        errs.items.append((path, "Invalid value: null: must specify one of: `podGroupName`"))
    else:
        errs.each(path, name, dns_subdomain_errors(name))
    if _seq(spec, "evictionResponders"):
        errs.forbidden("spec.schedulingGroup", "may not be set when evictionResponders is set")


def go_decode(doc: Mapping[str, Any], *, from_json: bool) -> dict[str, Any]:
    """The pod ``doc`` as Go's JSON decoder fills a v1 ``Pod``, for the
    fields read here and on the way to them: a value of the wrong type is
    refused (:class:`GoDecodeError`, the decoder's words, its first error
    in its order), a null element of a list (a value of a map) becomes its
    type's zero value; other fields as they are. A quantity that does not
    parse wins (its ``UnmarshalJSON`` fails: the decoding ends there, with
    that error, whatever type error was met before it)."""
    saved: list[GoDecodeError] = []
    outer = getattr(_DECODING, "memo", None)
    _DECODING.memo = {} if from_json else None
    try:
        out = _go_decode(doc, _G_POD, ("", ""), "", from_json, saved)
    finally:
        _DECODING.memo = outer
    if saved:
        raise saved[0]
    assert isinstance(out, dict)
    return out


# ---------------------------------------------------------------- the pod


def validate_static_pod(doc: Mapping[str, Any], *, node_name: str,
                        gates: _Gates | None = None) -> list[tuple[str, str]]:
    """The field errors ``ValidatePodCreate`` finds in the static pod
    ``doc`` (as decoded, before the file source's defaults) on the node
    ``node_name``, in the kubelet's order, with the validation options the
    kubelet derives from its feature ``gates``
    (:class:`~podnuma.agent.validation_kit.PodValidationOptions`; without
    them v1.37's defaults; ``spec.resources`` is checked only with the
    ``PodLevelResources`` gate). Empty when podnuma finds none."""
    opts = PodValidationOptions(gates)
    with validation_options(opts):
        return _validate(doc, node_name, opts.restart_rules, opts.pod_level_resources)


def _validate(doc: Mapping[str, Any], node_name: str, restart_rules: bool,
              pod_level_resources: bool) -> list[tuple[str, str]]:
    spec = _map(doc, "spec")
    if not _quantities_parse(spec):
        return []
    errs = _Errors()
    meta = _map(doc, "metadata")
    _metadata(errs, meta, node_name)
    # (ValidatePodSpecificAnnotations: the mirror-pod annotation needs the
    # spec.nodeName the file source always sets; the tolerations, the
    # deletion cost, seccomp and AppArmor)
    scheduling.check_tolerations_annotation(errs, meta)
    volumes_.check_pod_annotations(errs, meta)
    security.pod_security_annotations(errs, meta, spec)
    name = _str(meta, "name")
    _spec(errs, meta, spec, node_name, restart_rules, pod_level_resources,
          f"{name}-{go_lower(node_name)}" if name else "")
    security.annotations_match_fields(errs, meta, spec)
    return errs.items


def _metadata(errs: _Errors, meta: Mapping[str, Any], node_name: str) -> None:
    volumes_.check_generate_name(errs, meta)
    name = _str(meta, "name")
    if name:
        full = f"{name}-{go_lower(node_name)}"
        errs.each("metadata.name", full, dns_subdomain_errors(full))
    namespace = _str(meta, "namespace") or "default"
    errs.each("metadata.namespace", namespace, dns_label_errors(namespace))
    volumes_.check_generation(errs, meta)
    _labels(errs, _map(meta, "labels"), "metadata.labels")
    annotations = _map(meta, "annotations")
    for key in sorted(k for k in annotations if isinstance(k, str)):
        errs.each("metadata.annotations", key, qualified_name_errors(go_lower(key)))
    # (the file source has set kubernetes.io/config.hash to the pod's UID:
    # metadata.uid, else 32 hex digits of a hash)
    uid = _str(meta, "uid") or "0" * 32
    size = sum(go_len(k) + go_len(v) for k, v in annotations.items()
               if isinstance(k, str) and isinstance(v, str) and k != _CONFIG_HASH)
    size += go_len(_CONFIG_HASH) + go_len(uid)
    if size > 256 * 1024:
        errs.items.append(("metadata.annotations", f"Too long: may not be more than {256 * 1024} bytes"))
    volumes_.check_owners_and_finalizers(errs, meta)
    volumes_.check_managed_fields(errs, meta)
    volumes_.check_kube_finalizers(errs, meta)


def _spec(errs: _Errors, meta: Mapping[str, Any], spec: Mapping[str, Any], node_name: str, restart_rules: bool,
          pod_level_resources: bool, pod_name: str) -> None:

    volumes = _volumes(errs, spec, pod_name)
    resources_.check_pod_resource_claims(errs, meta, spec)
    host_network = spec.get("hostNetwork") is True
    claim_names = frozenset(n for n in (_str(c, "name") for c in _seq(spec, "resourceClaims")) if n)
    containers = [c for c in _seq(spec, "containers") if isinstance(c, Mapping)]
    inits = [c for c in _seq(spec, "initContainers") if isinstance(c, Mapping)]
    if not containers:  # (absent too: Go checks the length)
        errs.required("spec.containers")
    names: set[str] = set()
    for i, c in enumerate(containers):
        path = f"spec.containers[{i}]"
        _container_common(errs, c, path, volumes, host_network, claim_names)
        container.check_resize_policy(errs, c, f"{path}.resizePolicy", spec)
        security.container_security_context(errs, c, path, spec)
        cname = _str(c, "name") or ""
        if cname in names:
            errs.duplicate(f"{path}.name", cname)
        names.add(cname)
        _probes(errs, c, path, spec)
        volumes_.check_restart_policy(errs, c, path, restart_rules)
    _host_port_conflicts(errs, containers, "spec.containers", spec)
    for i, c in enumerate(inits):
        path = f"spec.initContainers[{i}]"
        _container_common(errs, c, path, volumes, host_network, claim_names)
        container.check_resize_policy(errs, c, f"{path}.resizePolicy", spec)
        security.container_security_context(errs, c, path, spec)
        policy = _str(c, "restartPolicy")
        volumes_.check_init_restart_policy(errs, c, path, restart_rules)
        cname = _str(c, "name") or ""
        if cname in names:
            errs.duplicate(f"{path}.name", cname)
        elif cname:
            names.add(cname)
        _host_port_conflicts(errs, [c], "spec.initContainers", spec, first=i)
        if policy == "Always":
            _probes(errs, c, path, spec)
        else:
            for key in ("lifecycle", *_PROBES):
                if c.get(key) is not None:
                    errs.forbidden(f"{path}.{key}", "may not be set for init containers without restartPolicy=Always")
        container.check_init_resize_policy(errs, c, path, policy == "Always")
    _ephemeral_containers(errs, spec, containers, inits, volumes, claim_names)
    if pod_level_resources:
        resources_.check_pod_resources(errs, spec, containers, inits, claim_names)
    if host_network:
        for i, c in enumerate(containers):
            for j, port in enumerate(_seq(c, "ports")):
                # (the host port as defaulted: the container port when 0;
                # an absent container port is 0)
                cport, hport = _int(port, "containerPort") or 0, _host_port(port, True)
                if hport != cport:
                    errs.invalid(f"spec.containers[{i}].ports[{j}].hostPort", hport,
                                 "must match `containerPort` when `hostNetwork` is true")
    restart = _str(spec, "restartPolicy")
    if restart and restart not in _RESTART_POLICIES:
        errs.unsupported_named("spec.restartPolicy", restart, _RESTART_POLICIES)
    dns = _str(spec, "dnsPolicy")
    if dns and dns not in _DNS_POLICIES:
        errs.unsupported_named("spec.dnsPolicy", dns, _DNS_POLICIES)
    _labels(errs, _map(spec, "nodeSelector"), "spec.nodeSelector")
    security.pod_security_context(errs, spec)

    scheduling.check_affinity_and_dns_config(errs, spec)
    volumes_.check_readiness_gates(errs, spec)
    gates: set[str] = set()
    for i, gate in enumerate(_seq(spec, "schedulingGates")):
        gate_name = _str(gate, "name") or ""
        errs.each(f"spec.schedulingGates[{i}]", gate_name, qualified_name_errors(gate_name))
        if gate_name in gates:
            errs.duplicate(f"spec.schedulingGates[{i}]", gate_name)
        gates.add(gate_name)
    scheduling.check_topology_spread_constraints(errs, spec)
    security.host_process_and_users(errs, spec)
    volumes_.check_hostname_override(errs, spec)
    check_service_account_name(errs, spec)
    errs.each("spec.nodeName", node_name, dns_subdomain_errors(node_name))
    deadline = _int(spec, "activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= _MAX_INT32:
        errs.invalid("spec.activeDeadlineSeconds", deadline, _range_error(1, _MAX_INT32))
    for key in ("hostname", "subdomain"):
        value = _str(spec, key)
        if value:
            errs.each(f"spec.{key}", value, dns_label_errors(value))
    scheduling.check_tolerations_and_host_aliases(errs, spec)
    priority_class = _str(spec, "priorityClassName")
    if priority_class:
        errs.each("spec.priorityClassName", priority_class, dns_subdomain_errors(priority_class))
    scheduling.check_runtime_class_and_preemption(errs, spec)
    resources_.check_overhead(errs, spec)
    scheduling.check_os(errs, spec)
    _check_scheduling_group(errs, spec)
    container.check_file_key_ref_volumes(errs, spec)  # (the last of ValidatePodSpec)
    # (pod-only checks, then ValidatePodCreate's own)
    volumes_.check_token_without_service_account(errs, spec)
    for key, ctrs in (("containers", containers), ("initContainers", inits)):
        for i, c in enumerate(ctrs):
            image = _str(c, "image")
            if image and image != image.strip(_GO_SPACE):
                errs.invalid(f"spec.{key}[{i}].image", image, "must not have leading or trailing whitespace")
    if _seq(spec, "ephemeralContainers"):
        errs.forbidden("spec.ephemeralContainers", "cannot be set on create")
    if _seq(spec, "schedulingGates"):
        errs.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared")


#: the fields of an ephemeral container that must stay unset (their zero
#: value: absent or null), in the order of ``core.EphemeralContainerCommon``
_EPHEMERAL_FORBIDDEN = ("ports", "resources", "resizePolicy", "restartPolicy", "restartPolicyRules",
                        "livenessProbe", "readinessProbe", "startupProbe", "lifecycle")
_EPHEMERAL_TEXT = "cannot be set for an Ephemeral Container"


def _ephemeral_set(c: Mapping[str, Any], key: str) -> bool:
    """The field ``key`` of ``c`` differs from its Go zero value (a list or
    a pointer: given, even empty; the resources: one of its lists given)."""
    value = _get(c, key)
    if key == "resources":
        return isinstance(value, Mapping) and any(value.get(k) is not None for k in ("limits", "requests", "claims"))
    return value is not None


def _ephemeral_containers(
    errs: _Errors, spec: Mapping[str, Any], containers: list[Mapping[str, Any]], inits: list[Mapping[str, Any]],
    volumes: Mapping[str, Mapping[str, Any]], claim_names: frozenset[str],
) -> None:
    """``validateEphemeralContainers``: each one as any container (no host
    network defaulting of its ports, no requests defaulted from its limits),
    its image without surrounding white space, its name unique across every
    container list, its target an app or init container, and none of the
    fields an ephemeral container may not have (nor a ``subPath`` or
    ``subPathExpr`` in its mounts)."""
    ephemeral = _seq(spec, "ephemeralContainers")
    if not ephemeral:
        return
    others = {_str(c, "name") or "" for c in (*containers, *inits)}
    names = set(others)
    for i, ec in enumerate(ephemeral):
        if not isinstance(ec, Mapping):
            continue
        path = f"spec.ephemeralContainers[{i}]"
        _container_common(errs, ec, path, volumes, False, claim_names, requests_from_limits=False)
        container.check_resize_policy(errs, ec, f"{path}.resizePolicy", spec)
        security.container_security_context(errs, ec, path, spec)
        image = _str(ec, "image")
        if image and image != image.strip(_GO_SPACE):
            errs.invalid(f"{path}.image", image, "must not have leading or trailing whitespace")
        name = _str(ec, "name") or ""
        if name in names:
            errs.duplicate(f"{path}.name", name)
        else:
            names.add(name)
        target = _str(ec, "targetContainerName")
        if target and target not in others:
            errs.not_found(f"{path}.targetContainerName", target)
        for key in _EPHEMERAL_FORBIDDEN:
            if _ephemeral_set(ec, key):
                errs.forbidden(f"{path}.{key}", _EPHEMERAL_TEXT)
        for j, mnt in enumerate(_seq(ec, "volumeMounts")):
            for key in ("subPath", "subPathExpr"):
                if _str(mnt, key):
                    errs.forbidden(f"{path}.volumeMounts[{j}].{key}", _EPHEMERAL_TEXT)


#: what Go's strings.TrimSpace trims (Unicode white space)
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _volumes(errs: _Errors, spec: Mapping[str, Any], pod_name: str) -> dict[str, Mapping[str, Any]]:
    """``ValidateVolumes``: the volumes without errors, by name
    (``podnuma.agent.validation_volumes`` checks each source)."""
    good: dict[str, Mapping[str, Any]] = {}
    listed = _seq(spec, "volumes")
    for i, vol in enumerate(listed):
        if not isinstance(vol, Mapping):
            continue
        path = f"spec.volumes[{i}]"
        found = _Errors()
        volumes_.check_volume_source(found, vol, path, pod_name)
        name = _str(vol, "name") or ""
        if not name:
            found.required(f"{path}.name")
        else:
            found.each(f"{path}.name", name, dns_label_errors(name))
        if name in good:
            found.duplicate(f"{path}.name", name)
        if found.items:
            errs.items.extend(found.items)
        else:
            good[name] = vol
        volumes_.check_volumes_claims(errs, listed, pod_name, i)
    return good


def _container_common(
    errs: _Errors, c: Mapping[str, Any], path: str, volumes: Mapping[str, Mapping[str, Any]], host_network: bool,
    claim_names: frozenset[str], *, requests_from_limits: bool = True,
) -> None:

    name = _str(c, "name")
    if not name:
        errs.required(f"{path}.name")
    else:
        errs.each(f"{path}.name", name, dns_label_errors(name))
    if not _str(c, "image"):
        errs.required(f"{path}.image")
    policy = _str(c, "terminationMessagePolicy")
    if policy and policy not in _TERMINATION_POLICIES:
        errs.unsupported_named(f"{path}.terminationMessagePolicy", policy, _TERMINATION_POLICIES)
    _ports(errs, c, f"{path}.ports", host_network)
    for i, env in enumerate(_seq(c, "env")):
        env_name = _str(env, "name")
        if not env_name:
            errs.required(f"{path}.env[{i}].name")
        else:
            errs.each(f"{path}.env[{i}].name", env_name, env_name_errors(env_name))
        container.check_env_value_from(errs, env, f"{path}.env[{i}].valueFrom")
    _env_from(errs, c, f"{path}.envFrom")
    volumes_.check_volume_mounts(errs, c, path, volumes)
    volumes_.check_volume_devices(errs, c, path, volumes)
    pull = _str(c, "imagePullPolicy")
    if pull and pull not in _PULL_POLICIES:
        errs.unsupported_named(f"{path}.imagePullPolicy", pull, _PULL_POLICIES)
    _resources(errs, c, f"{path}.resources", claim_names, requests_from_limits)


def _env_from(errs: _Errors, c: Mapping[str, Any], path: str) -> None:
    """``ValidateEnvFrom``: each source's prefix an environment variable
    name, its config map or secret named as one is (a DNS subdomain), and
    exactly one of them (a null entry is an empty one: neither)."""
    for i, source in enumerate(_seq(c, "envFrom")):
        prefix = _str(source, "prefix")
        if prefix:
            errs.each(f"{path}[{i}].prefix", prefix, env_name_errors(prefix))
        given = 0
        for key in ("configMapRef", "secretRef"):
            ref = _get(source, key)
            if ref is None:
                continue
            given += 1
            name = _str(ref, "name")
            if not name:
                errs.required(f"{path}[{i}].{key}.name")
            else:
                errs.each(f"{path}[{i}].{key}.name", name, dns_subdomain_errors(name))
        if given == 0:
            errs.invalid(path, "", "must specify one of: `configMapRef` or `secretRef`")
        elif given > 1:
            errs.invalid(path, "", "may not have more than one field specified at a time")


def _host_port(port: Mapping[str, Any], host_network: bool) -> int:
    """A port's host port, defaulted (to its container port with host
    networking) as the kubelet's decoder defaults it."""
    hport = _int(port, "hostPort") or 0
    if not hport and host_network:
        hport = _int(port, "containerPort") or 0
    return hport


def _ports(errs: _Errors, c: Mapping[str, Any], path: str, host_network: bool) -> None:
    names: set[str] = set()
    for i, port in enumerate(_seq(c, "ports")):
        if not isinstance(port, Mapping):
            continue
        where = f"{path}[{i}]"
        name = _str(port, "name")
        if name:
            msgs = port_name_errors(name)
            if msgs:
                errs.each(f"{where}.name", name, msgs)
            elif name in names:
                errs.duplicate(f"{where}.name", name)
            else:
                names.add(name)
        cport = _int(port, "containerPort")
        if not cport:
            if cport == 0 or port.get("containerPort") is None:
                errs.required(f"{where}.containerPort")
        elif not 1 <= cport <= 65535:
            errs.invalid(f"{where}.containerPort", cport, _range_error(1, 65535))
        hport = _host_port(port, host_network)
        if hport and not 1 <= hport <= 65535:
            errs.invalid(f"{where}.hostPort", hport, _range_error(1, 65535))
        protocol = _str(port, "protocol")
        if protocol and protocol not in _PROTOCOLS:
            errs.unsupported_named(f"{where}.protocol", protocol, _PROTOCOLS)


def _host_port_conflicts(
    errs: _Errors, ctrs: list[Mapping[str, Any]], path: str, spec: Mapping[str, Any], first: int = 0
) -> None:
    """``checkHostPortConflicts``: protocol, host IP and host port unique
    (after defaulting: TCP; with host networking the container port)."""
    seen: set[str] = set()
    host_network = spec.get("hostNetwork") is True
    for ci, c in enumerate(ctrs):
        for pi, port in enumerate(_seq(c, "ports")):
            if not isinstance(port, Mapping):
                continue
            hport = _host_port(port, host_network)
            if not hport:
                continue
            key = f"{_str(port, 'protocol') or 'TCP'}/{_str(port, 'hostIP') or ''}/{hport}"
            if key in seen:
                errs.duplicate(f"{path}[{first + ci}].ports[{pi}].hostPort", key)
            seen.add(key)


def _probes(errs: _Errors, c: Mapping[str, Any], path: str, spec: Mapping[str, Any]) -> None:
    """``lifecycle`` and the probes (``podnuma.agent.validation_container``)."""

    container.check_lifecycle_and_probes(errs, c, path, spec)


def _resources(errs: _Errors, c: Mapping[str, Any], path: str, claim_names: frozenset[str],
               requests_from_limits: bool = True) -> None:
    """``ValidateContainerResourceRequirements`` on the container's
    resources as defaulted (a missing request is its limit; not for an
    ephemeral container, which the v1 defaults leave alone)."""
    if requests_from_limits:
        limits, requests = resources_.container_lists(c)
    else:
        res = _map(c, "resources")
        limits = resources_.resource_list(_map(res, "limits"))
        requests = resources_.resource_list(_map(res, "requests"))
    container.check_container_resources(errs, limits, requests, _seq(_map(c, "resources"), "claims"),
                                        claim_names, path)

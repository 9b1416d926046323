"""Reading a v1 Pod manifest: fields, shapes, defaulting, validation.

What a Pod looks like by the time the kubelet sees it: the manifest's
fields read (strictly for the small, stable objects: the pod, its
metadata, containers and resources), the API server's defaulting
(``podnuma.api.pod_defaults``), the dropping of disabled fields
(``dropDisabledPodLevelResources``, ``pkg/api/pod/util.go``) and the
validation of the fields podnuma reads (``podnuma.api.pod_validation``;
container names, ``restartPolicy``).

Every known field of the pod (metadata, spec, every container and volume
field, status) must be of its JSON type, as the API server's decoding into
the Go types requires (``podnuma.api.pod_types``); an unknown field is
refused at any depth (a port's, a probe's, a volume source's, the
status's), as Go's strict decodings refuse it: the API server's with
exact names (``sigs.k8s.io/json``: ``Name`` is unknown), the kubelet
oracle's scenario decoding (``encoding/json``, ``unknown_in_order``) in
any case (``Name`` is ``name``; of two spellings the later in sorted key
order wins).

Field paths in errors are relative to the pod document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol

from podnuma.api.featuregates import GATE_POD_LEVEL_RESOURCES
from podnuma.api.pod import Container, ContainerKind, Pod, PodLevelResources, derive_pod_uid
from podnuma.api.pod_defaults import (
    default_container_requests,
    default_pod_level_resources,
    round_up_milli,
)
from podnuma.api.pod_schema import POD_TYPE, fold_name
from podnuma.api.pod_types import Numbers, check_pod_types, check_value_types
from podnuma.api.pod_validation import (
    HandlerRules,
    check_container_ports,
    check_container_resource_name,
    check_dns_label,
    check_dns_subdomain,
    check_ephemeral_fields,
    check_handlers,
    check_host_network_ports,
    check_host_port_conflicts,
    check_init_container_handlers,
    check_pod_resource_consistency,
    check_pod_resource_name,
    check_requirements,
    check_resource_quantity,
    check_target_container,
    duplicate,
    forbidden,
    handler_rules,
    required,
    resource_path,
    unsupported,
    unsupported_named,
)
from podnuma.api.pod_validation_os import check_os_fields
from podnuma.api.pod_validation_security import (
    annotation_errors,
    annotations_match_fields_errors,
    apparmor_version_skew,
    check_first,
    container_security_context_errors,
    ephemeral_on_create_errors,
    gate_options,
    host_process_and_users_errors,
    pod_security_context_errors,
)
from podnuma.api.quantity import ERR_FORMAT_WRONG, Quantity, QuantityError, quantity_from_manifest
from podnuma.api.resources import aggregate_limits_of, aggregate_requests_of
from podnuma.errors import InputError
from podnuma.fieldkit import (
    check_known_fields,
    expect_string_keys,
    field_path,
    optional_list,
    optional_mapping,
    optional_str,
    string_map,
    unknown_field,
)
from podnuma.golang.jsonnumbers import JSONNumberText
from podnuma.golang.strconv import go_quote
from podnuma.golang.types import go_json_kind

__all__ = ["IDENTITY_FIELDS", "FeatureGateView", "parse_pod", "with_identity_of", "POD_FIELDS",
           "METADATA_FIELDS", "SPEC_FIELDS", "CONTAINER_FIELDS", "EPHEMERAL_CONTAINER_FIELDS",
           "RESOURCES_FIELDS"]


class FeatureGateView(Protocol):
    """What ``parse_pod`` needs from ``FeatureGates``."""

    def enabled(self, name: str) -> bool: ...


# otherwise silently turn a Guaranteed pod into a BestEffort one.
POD_FIELDS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
METADATA_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields",
})
CONTAINER_FIELDS = frozenset({
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
    "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
    "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
})
EPHEMERAL_CONTAINER_FIELDS = CONTAINER_FIELDS | {"targetContainerName"}
RESOURCES_FIELDS = frozenset({"limits", "requests", "claims"})
# PodSpec gains fields release after release, so it is not checked strictly;
# only a key that is not a PodSpec field and looks like one podnuma reads
# (``initContainer``, ``container``, ``resource``) is refused.
SPEC_FIELDS = frozenset({
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
#: a container's fields ``ContainerRestartRules`` adds
_RESTART_FIELDS: Final = frozenset({"restartPolicy", "restartPolicyRules"})

def _check_spec_fields(spec: Mapping[str, Any]) -> None:
    for key in spec:
        if key in SPEC_FIELDS:
            continue
        import difflib  # the suggestion: loaded only for an unknown key

        hint = difflib.get_close_matches(key, _SPEC_READ, n=1, cutoff=0.75)
        if hint:
            raise unknown_field("spec", key, hint[0])


def _parse_qty(raw: object, path: str) -> Quantity:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float, type(None))):
        raise InputError(ERR_FORMAT_WRONG, path=path)  # (Quantity.UnmarshalJSON's: its text parses as none)
    try:
        return round_up_milli(quantity_from_manifest(raw))
    except QuantityError as err:
        raise InputError(str(err), path=path) from None


def _resource_list(raw: object, path: str, *, pod_level: bool) -> dict[str, Quantity]:
    """Names and values of one resource list (``ValidateResourceQuantityValue``)."""
    out: dict[str, Quantity] = {}
    for name, value in sorted(optional_mapping(raw, path).items()):
        where = resource_path(path, name)
        if pod_level:
            check_pod_resource_name(name, where)
        else:
            check_container_resource_name(name, where)
        qty = _parse_qty(value, where)
        check_resource_quantity(name, qty, where)
        out[name] = qty
    return out


def _pod_level_resources(
    raw: Mapping[str, Any],
    init_containers: Sequence[Container],
    containers: Sequence[Container],
    *,
    fix_defaulting: bool,
) -> PodLevelResources:
    path = "spec.resources"
    check_known_fields(raw, RESOURCES_FIELDS, path)
    if raw.get("claims"):
        raise forbidden(field_path(path, "claims"), "claims may not be set for Resources at pod-level")
    req = _resource_list(raw.get("requests"), field_path(path, "requests"), pod_level=True)
    lim = _resource_list(raw.get("limits"), field_path(path, "limits"), pod_level=True)

    aggr_req = aggregate_requests_of(init_containers, containers)
    aggr_lim = aggregate_limits_of(init_containers, containers)
    default_pod_level_resources(
        req, lim, aggr_req, aggr_lim, (*init_containers, *containers), fix_defaulting=fix_defaulting
    )
    check_requirements(req, lim, path)
    check_pod_resource_consistency(req, lim, aggr_req, aggr_lim, containers, path)
    return PodLevelResources(requests=req, limits=lim)



_CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")


def _named_container(raw: object, path: str, known: Iterable[str]) -> tuple[Mapping[str, Any], str]:
    """A container's fields (of ``known``) and its name: required, a DNS
    label (``validateContainerCommon``, which ephemeral containers share).
    A ``null`` in the list is the zero container to Go's decoder (no name:
    required)."""
    doc = expect_string_keys({} if raw is None else raw, path)
    check_known_fields(doc, known, path)
    name = optional_str(doc.get("name"), field_path(path, "name"))
    if not name:
        raise required(field_path(path, "name"))
    check_dns_label(name, field_path(path, "name"))
    return doc, name


def _container_resources(
    doc: Mapping[str, Any], path: str, *, defaults: bool
) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """A container's requests and limits, checked (``defaults``: requests
    defaulted from limits, as the v1 defaults do for app and init
    containers, not for ephemeral ones)."""
    res_path = field_path(path, "resources")
    res = optional_mapping(doc.get("resources"), res_path)
    check_known_fields(res, RESOURCES_FIELDS, res_path)
    limits = _resource_list(res.get("limits"), field_path(res_path, "limits"), pod_level=False)
    requests = _resource_list(res.get("requests"), field_path(res_path, "requests"), pod_level=False)
    if defaults:
        default_container_requests(requests, limits)
    check_requirements(requests, limits, res_path)
    return requests, limits


#: the exit-code operators of a restart rule, and its actions (with
#: ``RestartAllContainersOnContainerExits`` the second too), as listed
_RESTART_RULE_OPERATORS: Final = ("In", "NotIn")
_RESTART_RULE_ACTIONS: Final = ("Restart",)
_RESTART_RULE_ACTIONS_ALL: Final = ("Restart", "RestartAllContainers")
#: validateOS: the operating systems a pod may name, as listed
_OS_NAMES: Final = ("linux", "windows")
_RESTART_ALL_GATE: Final = "RestartAllContainersOnContainerExits"
_MAX_RESTART_RULES: Final = 20
_MAX_RESTART_EXIT_CODES: Final = 255


def _check_restart_policy(restart_policy: str | None, rules: Sequence[Any], path: str, *, init: bool,
                          restart_all: bool) -> None:
    """A container's ``restartPolicy`` and ``restartPolicyRules`` (what is
    left of them once ``dropContainerRestartRules`` ran; ``rules`` empty
    then): ``validateContainerRestartPolicy`` for an app container;
    ``validateInitContainerRestartPolicy`` for an init container, where
    only a policy set validates the rules (rules without one are refused
    alone), and a sidecar's (Always) rules are refused unless
    ``restart_all`` (the ``RestartAllContainersOnContainerExits`` gate)
    lets them through the app container's checks. The first error of
    that order: the policy (required with rules, else Always, Never or
    OnFailure), how many rules, then each rule's action, exit-code
    operator, how many exit codes, and whether it has ``exitCodes``
    (``restart_all`` is read only with rules: the gate is asked then)."""
    policy_path = field_path(path, "restartPolicy")
    if restart_policy is None:
        if rules:
            raise required(policy_path, "must specify restartPolicy when restart rules are used")
        return
    if init and restart_policy == "Always" and not restart_all:
        if rules:
            raise forbidden(field_path(path, "restartPolicyRules"),
                            "restartPolicyRules are not allowed for init containers with restart policy Always")
        return
    if restart_policy not in _CONTAINER_RESTART_POLICIES:
        raise unsupported_named(policy_path, restart_policy, _CONTAINER_RESTART_POLICIES)
    rules_path = field_path(path, "restartPolicyRules")
    if len(rules) > _MAX_RESTART_RULES:
        raise InputError(f"Too many: {len(rules)}: must have at most {_MAX_RESTART_RULES} items", path=rules_path)
    actions = _RESTART_RULE_ACTIONS_ALL if restart_all else _RESTART_RULE_ACTIONS
    for i, rule in enumerate(rules):
        at = f"{rules_path}[{i}]"
        rule_doc = rule if isinstance(rule, Mapping) else {}
        action = rule_doc.get("action")
        action = action if isinstance(action, str) else ""
        if action not in actions:
            raise unsupported_named(field_path(at, "action"), action, actions)
        codes = rule_doc.get("exitCodes")
        if not isinstance(codes, Mapping):
            raise required(field_path(at, "exitCodes"), "must be specified")
        operator = codes.get("operator")
        operator = operator if isinstance(operator, str) else ""
        codes_path = field_path(at, "exitCodes")
        if operator not in _RESTART_RULE_OPERATORS:
            raise unsupported_named(field_path(codes_path, "operator"), operator, _RESTART_RULE_OPERATORS)
        values = codes.get("values")
        count = len(values) if isinstance(values, list | tuple) else 0
        if count > _MAX_RESTART_EXIT_CODES:
            raise InputError(f"Too many: {count}: must have at most {_MAX_RESTART_EXIT_CODES} items",
                             path=field_path(codes_path, "values"))


def _parse_container(
    raw: object, path: str, index: int, *, init: bool, restart_rules: bool, seen: set[str],
    host_network: bool, rules: HandlerRules, spec: Mapping[str, Any],
) -> Container:
    """One container, its checks in the API server's order
    (``validateContainers``: name, ports, resources, security context, a
    duplicate name among ``seen``, hooks and probes, ``restartPolicy``;
    ``validateInitContainers``: name, ports, resources, security context,
    ``restartPolicy``, a duplicate name, host ports, hooks and probes;
    ``spec``: the pod's, which ``procMount`` checks read). ``restart_rules`` is the ``ContainerRestartRules``
    gate (beta, on in v1.37), with which every container may set
    ``restartPolicy`` to Always, Never or OnFailure (an init container is a
    sidecar only with Always); with it off the API server's
    ``PrepareForCreate`` drops every container's ``restartPolicy`` but an
    init container's Always before validation."""
    doc, name = _named_container(raw, path, CONTAINER_FIELDS)
    restart_policy = optional_str(doc.get("restartPolicy"), field_path(path, "restartPolicy"))
    policy_rules: Sequence[Any] = ()
    if restart_rules:
        policy_rules = optional_list(doc.get("restartPolicyRules"), field_path(path, "restartPolicyRules"))
    elif not init or restart_policy != "Always":
        # dropContainerRestartRules (PrepareForCreate, gate off): only an
        # init container's Always reaches validation, and no rule
        restart_policy = None
    check_container_ports(doc.get("ports"), path, host_network=host_network)
    requests, limits = _container_resources(doc, path, defaults=True)
    # (ValidateSecurityContext: the last check of validateContainerCommon)
    check_first(container_security_context_errors(doc, path, spec))

    if init:
        _check_restart_policy(restart_policy, policy_rules, path, init=True,
                              restart_all=bool(policy_rules) and rules.gate(_RESTART_ALL_GATE))
    if name in seen:
        raise duplicate(field_path(path, "name"), name)
    seen.add(name)
    if init:
        check_host_port_conflicts((doc,), "spec.initContainers", host_network=host_network)
        check_init_container_handlers(doc, path, sidecar=restart_policy == "Always", rules=rules)
    else:
        check_handlers(doc, path, rules)
        _check_restart_policy(restart_policy, policy_rules, path, init=False,
                              restart_all=bool(policy_rules) and rules.gate(_RESTART_ALL_GATE))

    kind: ContainerKind = "app"
    if init:
        kind = "sidecar" if restart_policy == "Always" else "init"
    return Container(
        name=name, kind=kind, requests=requests, limits=limits,
        restart_policy=restart_policy, index=index,
    )


def _check_qty(raw: object, path: str) -> None:
    """A quantity of the pod parses (``Quantity.UnmarshalJSON``, wherever
    the pod has one: the decoding's check)."""
    _parse_qty(raw, path)


#: the metadata fields that tell one pod of a workload from another:
#: :func:`with_identity_of` reads them
IDENTITY_FIELDS: Final = frozenset({"name", "uid", "labels"})


def _pod_name(meta: Mapping[str, Any]) -> str:
    name = optional_str(meta.get("name"), "metadata.name")
    if not name:
        raise required("metadata.name", "name or generateName is required")
    check_dns_subdomain(name, "metadata.name")
    return name


def _uid_and_labels(meta: Mapping[str, Any], namespace: str, name: str) -> tuple[str, dict[str, str]]:
    uid = optional_str(meta.get("uid"), "metadata.uid") or derive_pod_uid(namespace, name)
    return uid, string_map(meta.get("labels"), "metadata.labels", resource_path)


def with_identity_of(template: Pod, meta: Mapping[str, Any], *, sort_keys: bool = False,
                     numbers: Numbers | None = None) -> Pod:
    """``parse_pod`` of a manifest that differs from the one ``template``
    was parsed from only in its metadata's :data:`IDENTITY_FIELDS`, given
    that manifest's ``metadata`` (a mapping with string keys): those fields
    are checked as ``parse_pod`` checks them (the same errors; every other
    check passed for the template) and put on a copy of the template
    (``sort_keys``, ``numbers``: as :func:`parse_pod`'s)."""
    if not _plain_identity(meta):
        # (parse_pod's type check, of these fields alone: every other field
        # passed it for the template, and no time is among them)
        check_value_types({k: v for k, v in meta.items() if k in IDENTITY_FIELDS}, _METADATA_TYPE,
                          "metadata", sort_keys=sort_keys, numbers=_numbers(numbers, sort_keys))
    name = _pod_name(meta)
    uid, labels = _uid_and_labels(meta, template.namespace, name)
    return template.with_identity(name, uid, labels)


_METADATA_TYPE: Final = POD_TYPE.fields["metadata"][0]


def _numbers(numbers: Numbers | None, sort_keys: bool) -> Numbers:
    """``parse_pod``'s ``numbers``, its default resolved: a pod written
    again from a map (``sort_keys``) went through ``kubectl``'s conversion
    to JSON (``"float"``); a pod decoded as written, its numbers as read."""
    if numbers is not None:
        return numbers
    return "float" if sort_keys else "as-read"


def _plain_identity(meta: Mapping[str, Any]) -> bool:
    """The identity fields of ``meta`` are of their JSON types for certain
    (exact types: a :class:`~podnuma.golang.jsonnumbers.JSONNumberText`,
    a ``str``, is a number to the type check)."""
    name, uid, labels = meta.get("name"), meta.get("uid"), meta.get("labels")
    return ((name is None or type(name) is str) and (uid is None or type(uid) is str)
            and (labels is None or (type(labels) is dict
                                    and all(v is None or type(v) is str for v in labels.values()))))


#: the scheme the API server's errors name (the legacy scheme's)
_SCHEME_NAME: Final = "pkg/runtime/scheme.go:111"
#: the kinds the API server's scheme creates for version ``v1`` besides a
#: Pod (k8s.io/api v0.37.2 ``core/v1`` ``addKnownTypes``, the options and
#: ``WatchEvent`` ``metav1.AddToGroupVersion`` adds), and those it creates
#: for any version (metav1's unversioned types): a body of such a kind is
#: decoded as that kind, which podnuma does not model
_V1_KINDS: Final = frozenset({
    "PodList", "PodTemplate", "PodTemplateList", "ReplicationController", "ReplicationControllerList",
    "Service", "ServiceProxyOptions", "ServiceList", "Endpoints", "EndpointsList", "Node", "NodeList",
    "NodeProxyOptions", "Binding", "Event", "EventList", "List", "LimitRange", "LimitRangeList",
    "ResourceQuota", "ResourceQuotaList", "Namespace", "NamespaceList", "Secret", "SecretList",
    "ServiceAccount", "ServiceAccountList", "PersistentVolume", "PersistentVolumeList",
    "PersistentVolumeClaim", "PersistentVolumeClaimList", "PodAttachOptions", "PodLogOptions",
    "PodExecOptions", "PodPortForwardOptions", "PodProxyOptions", "ComponentStatus",
    "ComponentStatusList", "SerializedReference", "RangeAllocation", "ConfigMap", "ConfigMapList",
    "WatchEvent", "ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "UpdateOptions",
    "PatchOptions",
})
_UNVERSIONED_KINDS: Final = frozenset({"Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList"})
#: the type meta's fields, folded (``fold_name``) -> their JSON names
_TYPE_META_FOLDED: Final = {"APIVERSION": "apiVersion", "KIND": "kind"}


def _key(item: tuple[str, Any]) -> str:
    return item[0]


def _check_type_meta(doc: Mapping[str, Any], sort_keys: bool) -> None:
    """The pod's ``apiVersion`` and ``kind`` as the API server's JSON
    serializer finds them before it decodes the body
    (k8s.io/apimachinery ``serializer/json``: ``SimpleMetaFactory.Interpret``,
    then the request's defaults, v1 and Pod): ``encoding/json`` into a
    struct of the two strings, so a key matches in any case (``Kind``,
    ``KIND``), the last one met (in the keys' order with ``sort_keys``)
    wins, a ``null`` leaves it, a value of another type is refused; an
    empty kind is Pod, an empty version v1. Anything but v1 Pod is refused
    in the serializer's words (``no kind "x" is registered for version
    "v1"``), at the key the refused value came from; a kind the scheme
    does create (:data:`_V1_KINDS`, :data:`_UNVERSIONED_KINDS`) in
    podnuma's (Go decodes the body as that kind)."""
    found = {"apiVersion": ("", "apiVersion"), "kind": ("", "kind")}
    refused: tuple[str, str, str] | None = None
    pairs = getattr(doc, "pairs", None)  # (an object read with its repeated keys: each met in turn)
    items = pairs if isinstance(pairs, list) else list(doc.items())
    for key, value in (sorted(items, key=_key) if sort_keys else items):
        name = _TYPE_META_FOLDED.get(fold_name(key))
        if name is None or value is None:
            continue
        if type(value) is str:
            found[name] = (value, key)
        elif refused is None:
            refused = (key, name, "number" if isinstance(value, JSONNumberText) else go_json_kind(value))
    if refused is not None:
        key, name, what = refused
        raise InputError(f"couldn't get version/kind; json parse error: json: cannot unmarshal {what} "
                         f"into Go struct field .{name} of type string", path=key)
    (version, version_key), (kind, kind_key) = found["apiVersion"], found["kind"]
    if version.count("/") > 1:
        raise InputError(f"unexpected GroupVersion string: {version}", path=version_key)
    group, _, version = version.rpartition("/") if version != "/" else ("", "", "")
    kind = kind or "Pod"
    if not version:
        if group:
            raise InputError("Object 'apiVersion' is missing", path=version_key)
        version = "v1"
    if (group, version, kind) == ("", "v1", "Pod"):
        return
    if kind in _UNVERSIONED_KINDS or (group, version) == ("", "v1") and kind in _V1_KINDS:
        raise unsupported(kind_key, kind, ("Pod",))
    gv = f"{group}/{version}" if group else version
    raise InputError(f"no kind {go_quote(kind)} is registered for version {go_quote(gv)} in scheme "
                     f"{go_quote(_SCHEME_NAME)}", path=kind_key if kind != "Pod" else version_key)


def parse_pod(doc: Mapping[str, Any], *, gates: FeatureGateView, sort_keys: bool = False,
              numbers: Numbers | None = None, unknown_in_order: bool = False, lenient: bool = False,
              on_create: bool | None = None) -> Pod:
    """Parse, default and validate a v1 Pod manifest.

    Raises ``InputError`` whose path is relative to ``doc``. Unknown fields
    are refused at any depth (strict field validation); fields are not
    checked beyond their JSON types but where the validation reads them.
    ``sort_keys``: the pod reaches Go's decoding with its mappings' keys
    sorted (written again from a map by ``json.Marshal``, as ``kubectl``
    sends a manifest and the kubelet oracle's scenario gives its pods), so
    its first failing time, int-or-string or quantity is the first in that
    order (:func:`podnuma.api.pod_types.check_pod_types`); else the
    document's order (a JSON dump, as written). ``numbers``: how its
    numbers reached Go's decoder (:data:`podnuma.api.pod_types.Numbers`;
    by default ``"float"`` with ``sort_keys``, as ``kubectl`` sends them,
    else as read). An unknown field is refused once the decoding found
    nothing else wrong, as the API server's strict decoding refuses it;
    ``unknown_in_order``: where the decoding meets it, the first error
    then (``encoding/json``'s ``DisallowUnknownFields``, with which the
    kubelet oracle decodes a scenario's pods), and a key matches a field
    whatever its case (``encoding/json``'s match: ``metadata: {Name: w}``
    is the pod ``w``; of ``Name`` and ``name`` the later in sorted order,
    ``name``, wins); without it only the exact name matches (the API
    server's ``sigs.k8s.io/json``). ``lenient``: unknown fields are dropped
    at any depth instead (client-go's decoding, with which the kubelet
    reads the pods an API server serves, a newer one's fields included).
    ``on_create``: the pod is a create request, whose ephemeral containers
    ``ValidatePodCreate`` refuses (by default on the API server's path:
    neither ``unknown_in_order`` nor ``lenient``; ``False`` for a pod
    read back from a dump, which may hold ephemeral containers added since).
    """
    doc = expect_string_keys(doc, "")
    api_path = not unknown_in_order and not lenient
    if api_path:
        # (the API server's serializer finds the kind before decoding)
        _check_type_meta(doc, sort_keys)
    # (the API server's decoding: every quantity parsed, a time or an
    # int-or-string that fails, a known field of the wrong JSON type, then
    # an unknown field)
    # (encoding/json, unknown_in_order, matches a key in any case: the pod
    # read on is the decoded one, each such key under its field's name)
    doc = check_pod_types(doc, quantity=_check_qty, sort_keys=sort_keys, numbers=_numbers(numbers, sort_keys),
                          strict=not lenient, strict_in_order=unknown_in_order and not lenient,
                          fold=unknown_in_order, drop_unknown=lenient)
    check_known_fields(doc, POD_FIELDS, "")
    if isinstance(doc.get("spec"), Mapping):
        # (a spec key podnuma takes for a misspelling of one it reads: an
        # unknown field too, refused before any validation)
        _check_spec_fields(doc["spec"])
    if not api_path:
        api_version = doc.get("apiVersion")
        if api_version is not None and api_version != "v1":
            raise unsupported("apiVersion", api_version, ("v1",))
        kind = doc.get("kind")
        if kind is not None and kind != "Pod":
            raise unsupported("kind", kind, ("Pod",))

    meta = doc.get("metadata")
    if meta is None:
        raise required("metadata")
    meta = expect_string_keys(meta, "metadata")
    check_known_fields(meta, METADATA_FIELDS, "metadata")
    name = _pod_name(meta)
    namespace = optional_str(meta.get("namespace"), "metadata.namespace") or "default"
    check_dns_label(namespace, "metadata.namespace")
    uid, labels = _uid_and_labels(meta, namespace, name)
    annotations = string_map(meta.get("annotations"), "metadata.annotations", resource_path)

    spec_raw = doc.get("spec")
    if spec_raw is None:
        raise required("spec")
    spec = expect_string_keys(spec_raw, "spec")
    _check_spec_fields(spec)
    pod_restart = optional_str(spec.get("restartPolicy"), "spec.restartPolicy")
    # (the end of ValidatePodSpecificAnnotations, before ValidatePodSpec)
    check_first(annotation_errors(annotations, spec))
    # (PrepareForCreate: a container's AppArmor annotation made its field)
    spec = apparmor_version_skew(annotations, spec)

    # ValidatePodSpec's order: validateContainers (then the app containers'
    # host ports together), validateInitContainers (names unique across
    # both lists), validateEphemeralContainers, the pod-level resources,
    # validateRestartPolicy, validateOverhead
    restart_rules = gates.enabled("ContainerRestartRules")
    host_network = spec.get("hostNetwork") is True
    rules = handler_rules(spec, gates.enabled)
    seen: set[str] = set()
    raw_containers = optional_list(spec.get("containers"), "spec.containers")
    if not raw_containers:
        raise required("spec.containers")
    containers = tuple(
        _parse_container(raw, f"spec.containers[{i}]", i, init=False, restart_rules=restart_rules, seen=seen,
                         host_network=host_network, rules=rules, spec=spec)
        for i, raw in enumerate(raw_containers)
    )
    app_docs = [c for c in raw_containers if isinstance(c, Mapping)]
    check_host_port_conflicts(app_docs, "spec.containers", host_network=host_network)
    init_containers = tuple(
        _parse_container(raw, f"spec.initContainers[{i}]", i, init=True, restart_rules=restart_rules, seen=seen,
                         host_network=host_network, rules=rules, spec=spec)
        for i, raw in enumerate(optional_list(spec.get("initContainers"), "spec.initContainers"))
    )

    ephemeral: list[str] = []
    targets = frozenset(c.name for c in (*containers, *init_containers))
    for i, raw in enumerate(optional_list(spec.get("ephemeralContainers"), "spec.ephemeralContainers")):
        path = f"spec.ephemeralContainers[{i}]"
        eph, eph_name = _named_container(raw, path, EPHEMERAL_CONTAINER_FIELDS)
        check_container_ports(eph.get("ports"), path)
        _container_resources(eph, path, defaults=False)
        check_first(container_security_context_errors(eph, path, spec))
        if eph_name in seen:
            raise duplicate(field_path(path, "name"), eph_name)
        seen.add(eph_name)
        check_target_container(eph, path, targets)
        if not restart_rules:
            # dropContainerRestartRules (PrepareForCreate, gate off) walks
            # the ephemeral containers too: their restart fields are gone
            # before validateFieldAllowList could refuse them
            eph = {k: v for k, v in eph.items() if k not in _RESTART_FIELDS}
        check_ephemeral_fields(eph, path, rules)
        ephemeral.append(eph_name)

    resources: PodLevelResources | None = None
    raw_resources = spec.get("resources")
    # dropDisabledPodLevelResources: with the gate off the field never reaches the kubelet.
    if raw_resources is not None and gates.enabled(GATE_POD_LEVEL_RESOURCES):
        resources_doc = expect_string_keys(raw_resources, "spec.resources")
        # validatePodResources: a Windows pod may not set them at all (even
        # empty), refused before any check of what they hold
        os_doc = spec.get("os")
        if isinstance(os_doc, Mapping) and os_doc.get("name") == "windows":
            raise forbidden("spec.resources", "may not be set for a windows pod")
        resources = _pod_level_resources(
            resources_doc,
            init_containers,
            containers,
            fix_defaulting=gates.enabled("PodLevelResourcesFixDefaulting"),
        )

    if host_network:
        check_host_network_ports(app_docs, "spec.containers")
    # validateRestartPolicy ("" is defaulted to Always before validation)
    if pod_restart and pod_restart not in _POD_RESTART_POLICIES:
        raise unsupported_named("spec.restartPolicy", pod_restart, _POD_RESTART_POLICIES)
    # validatePodSpecSecurityContext, validateShareProcessNamespace; later
    # validateWindowsHostProcessPod, validateHostUsers
    only_recursive_selinux, userns_host_network = gate_options(spec, gates.enabled)
    check_first(pod_security_context_errors(spec, only_recursive_selinux=only_recursive_selinux))
    check_first(host_process_and_users_errors(spec, userns_host_network=userns_host_network))

    # validateOverhead: the list is checked as the limits of a container's
    # resources, under that path (spec.overhead.limits[NAME], an upstream quirk)
    overhead = _resource_list(spec.get("overhead"), "spec.overhead.limits", pod_level=False)
    check_requirements({}, overhead, "spec.overhead")
    # validateOS, after the overhead: a name is required, and one of the two
    # the API server knows; then that OS's own checks (validateLinux,
    # validateWindows)
    os_doc = spec.get("os")
    if isinstance(os_doc, Mapping):
        os_name = os_doc.get("name")
        if not os_name:
            raise required("spec.os.name")
        if os_name not in _OS_NAMES:
            raise unsupported_named("spec.os", os_name, _OS_NAMES)
        check_os_fields(spec, str(os_name))
    # the end of ValidatePodCreate: no ephemeral containers on create (the
    # API server's path only: a scenario's or a served pod got them later),
    # then the seccomp and AppArmor annotations agree with the fields
    if api_path if on_create is None else on_create:
        check_first(ephemeral_on_create_errors(spec))
    check_first(annotations_match_fields_errors(annotations, spec))

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

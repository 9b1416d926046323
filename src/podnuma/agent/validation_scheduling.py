"""The scheduling and name-resolution fields of a static pod, as
``ValidatePodCreate`` checks them.

Mirrors k8s.io/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``
(``ValidatePodSpec``'s calls of ``validateAffinity``, ``validateNodeAffinity``,
``ValidateNodeSelector``, ``ValidateNodeSelectorTerm``,
``ValidateNodeSelectorRequirement``, ``ValidateNodeFieldSelectorRequirement``,
``ValidatePreferredSchedulingTerms``, ``validatePodAffinity``,
``validatePodAntiAffinity``, ``validatePodAffinityTerms``,
``validateWeightedPodAffinityTerms``, ``validatePodAffinityTerm``,
``ValidatePodAffinityTermSelector``, ``ValidateMatchLabelKeysAndMismatchLabelKeys``,
``validateLabelKeys``, ``validatePodDNSConfig``,
``validateTopologySpreadConstraints``, ``validateMinDomains``,
``ValidateTopologyKey``, ``ValidateWhenUnsatisfiable``,
``ValidateSpreadConstraintNotRepeat``, ``validateNodeInclusionPolicy``,
``ValidateTolerations``, ``validateTaintEffect``, ``ValidateHostAliases``,
``ValidateRuntimeClassName``, ``ValidatePreemptionPolicy``, ``validateOS``,
``validateLinux``, ``validateWindows``), with
k8s.io/apimachinery v0.37.2 ``pkg/apis/meta/v1/validation/validation.go``
(``ValidateLabelSelector``, ``ValidateLabelSelectorRequirement``,
``ValidateLabelName``) and ``pkg/util/validation/ip.go`` (``IsValidIPForLegacyField``
with k8s.io/utils' sloppy ``ParseIP`` and ``netip.ParseAddr``).

The kubelet's options for a static pod are those of a new pod with the
kubelet's gates (``validation_kit.options()``): invalid label values in
selectors refused, ``matchLabelKeys`` of a spread constraint checked as pod
affinity's are (``MatchLabelKeysInPodTopologySpread`` and its
``SelectorMerge``; else the legacy rule), the ``Lt`` and ``Gt`` toleration
operators refused unless ``TaintTolerationComparisonOperators`` (then the
value a decimal integer), IP addresses checked strictly
(``StrictIPCIDRValidation``). The file
source appends the toleration ``{operator: Exists, effect: NoExecute}``
(or replaces an equal one): always valid, it adds no error.

A value of a named Go type (an operator, an effect, a policy) is shown as
``encoding/json`` writes it (``_json_q``), a plain string as ``%q`` does;
map keys are walked in sorted order (Go's order is random).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.agent.validation_kit import (
    _Errors,
    _get,
    _int,
    _labels,
    _map,
    _q,
    _seq,
    _str,
    label_value_errors,
    options,
)
from podnuma.api.pod_validation import (
    dns_label_errors,
    dns_subdomain_errors,
    go_len,
    qualified_name_errors,
)
from podnuma.api.pod_validation_os import os_field_errors
from podnuma.golang.json import GoJSONError, go_json_parse, go_json_quote, go_json_unmarshal
from podnuma.golang.strconv import parse_int64_error
from podnuma.golang.types import GO_STRING, GoBasic, GoField, GoPtr, GoSlice, GoStruct

#: a toleration's value for ``Lt``/``Gt``: a decimal integer in canonical
#: form (``content.IsDecimalInteger``)
_DECIMAL = re.compile(r"0|-?[1-9][0-9]*")


__all__ = [
    "check_affinity_and_dns_config",
    "check_os",
    "check_runtime_class_and_preemption",
    "check_tolerations_and_host_aliases",
    "check_tolerations_annotation",
    "check_topology_spread_constraints",
]

_MAX_NAMESERVERS = 3
_MAX_SEARCHES = 32
_MAX_SEARCH_CHARS = 2048

_SUBDOMAIN_UNDERSCORE_FMT = r"_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*"
_SUBDOMAIN_UNDERSCORE = re.compile(_SUBDOMAIN_UNDERSCORE_FMT)
_SUBDOMAIN_UNDERSCORE_TEXT = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '" + _SUBDOMAIN_UNDERSCORE_FMT + "')"
)
_IP_TEXT = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"

_SELECTOR_VALUES_NEEDED = "must be specified when `operator` is 'In' or 'NotIn'"
_SELECTOR_VALUES_FORBIDDEN = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
_NOT_AN_OPERATOR = "not a valid selector operator"
_WEIGHT_RANGE = "must be in the range 1-100"
_NOT_POSITIVE = "must be greater than zero"

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")  # (a set, listed sorted)
_NODE_INCLUSION = ("Honor", "Ignore")  # (likewise)
_PREEMPTION = ("PreemptLowerPriority", "Never")
_OS_NAMES = ("linux", "windows")


# ---------------------------------------------------------------- wording


def _json_q(value: Any) -> str:
    """``value`` as ``encoding/json`` writes it (HTML characters escaped,
    as ``json.Marshal`` does): how a field error shows a value of a named
    string type, a pointer or a list."""
    if isinstance(value, str):
        return go_json_quote(value)
    if isinstance(value, list):
        return "[" + ",".join(_json_q(v) for v in value) + "]"
    if value is None:
        return "null"
    return str(value)


def _invalid_typed(errs: _Errors, path: str, value: Any, detail: str) -> None:
    errs.items.append((path, f"Invalid value: {_json_q(value)}: {detail}"))


def _unsupported_typed(errs: _Errors, path: str, value: str, supported: Sequence[str]) -> None:
    allowed = ", ".join(_q(s) for s in supported)
    errs.items.append((path, f"Unsupported value: {_json_q(value)}: supported values: {allowed}"))


def _strings(m: Any, key: str) -> list[str]:
    return [v for v in _seq(m, key) if isinstance(v, str)]


def _subdomain_underscore_errors(value: str) -> list[str]:
    out = []
    if go_len(value) > 253:
        out.append("must be no more than 253 characters")
    if not _SUBDOMAIN_UNDERSCORE.fullmatch(value):
        out.append(_SUBDOMAIN_UNDERSCORE_TEXT)
    return out


# ---------------------------------------------------------------- IP addresses


def _decimal(s: str) -> tuple[int, int] | None:
    """The decimal number at the start of ``s`` and its length (the
    sloppy parser's: leading zeros allowed, too large a number refused)."""
    n = i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        n = n * 10 + ord(s[i]) - 48
        if n >= 0xFFFFFF:
            return None
        i += 1
    return (n, i) if i else None


def _hexadecimal(s: str) -> tuple[int, int] | None:
    n = i = 0
    while i < len(s) and s[i] in "0123456789abcdefABCDEF":
        n = n * 16 + int(s[i], 16)
        if n >= 0xFFFFFF:
            return None
        i += 1
    return (n, i) if i else None


def _sloppy_v4(s: str) -> tuple[bytes, bool] | None:
    """The four bytes of a dotted IPv4 address, and whether an octet has a
    leading zero (accepted here, refused by strict parsing)."""
    out = bytearray()
    zeros = False
    for i in range(4):
        if not s:
            return None
        if i:
            if s[0] != ".":
                return None
            s = s[1:]
        got = _decimal(s)
        if got is None or got[0] > 0xFF:
            return None
        n, width = got
        zeros = zeros or (width > 1 and s[0] == "0")
        s = s[width:]
        out.append(n)
    return (bytes(out), zeros) if not s else None


def _sloppy_v6(s: str) -> tuple[bytes, bool] | None:
    """The sixteen bytes of an IPv6 address, and whether it is written in a
    way strict parsing refuses (a group of more than four digits, an
    embedded IPv4 address with a leading zero)."""
    ip = bytearray(16)
    ellipsis = -1
    odd = False
    if s.startswith("::"):
        ellipsis, s = 0, s[2:]
        if not s:
            return bytes(ip), False
    i = 0
    while i < 16:
        got = _hexadecimal(s)
        if got is None or got[0] > 0xFFFF:
            return None
        n, width = got
        if width < len(s) and s[width] == ".":
            if (ellipsis < 0 and i != 12) or i + 4 > 16:
                return None
            v4 = _sloppy_v4(s)
            if v4 is None:
                return None
            ip[i:i + 4] = v4[0]
            odd = odd or v4[1]
            s, i = "", i + 4
            break
        odd = odd or width > 4
        ip[i], ip[i + 1] = n >> 8, n & 0xFF
        i += 2
        s = s[width:]
        if not s:
            break
        if s[0] != ":" or len(s) == 1:
            return None
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                return None
            ellipsis, s = i, s[1:]
            if not s:
                break
    if s:
        return None
    if i < 16:
        if ellipsis < 0:
            return None
        gap = 16 - i
        ip[ellipsis + gap:16] = ip[ellipsis:i]
        ip[ellipsis:ellipsis + gap] = bytes(gap)
    elif ellipsis >= 0:
        return None
    return bytes(ip), odd


def ip_errors(value: str) -> list[str]:
    """``IsValidIPForLegacyField``: its messages (with strict validation,
    ``StrictIPCIDRValidation``, no leading zeros nor IPv4-mapped IPv6)."""
    parsed: tuple[bytes, bool] | None = None
    v6 = False
    for ch in value:
        if ch == ".":
            parsed = _sloppy_v4(value)
            break
        if ch == ":":
            parsed, v6 = _sloppy_v6(value), True
            break
    if parsed is None:
        return [_IP_TEXT]
    raw, odd = parsed
    if not options().strict_ip:
        return []
    if odd:
        return ["must not have leading 0s"]
    if v6 and raw[:12] == bytes(10) + b"\xff\xff":
        return ["must not be an IPv4-mapped IPv6 address"]
    return []


# ---------------------------------------------------------------- selectors


def _label_selector(errs: _Errors, selector: Any, path: str) -> None:
    """``ValidateLabelSelector`` (invalid label values refused); nothing
    for an absent selector."""
    if not isinstance(selector, Mapping):
        return
    _labels(errs, _map(selector, "matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(_seq(selector, "matchExpressions")):
        where = f"{path}.matchExpressions[{i}]"
        op = _str(expr, "operator") or ""
        values = _strings(expr, "values")
        if op in ("In", "NotIn"):
            if not values:
                errs.required(f"{where}.values", _SELECTOR_VALUES_NEEDED)
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.forbidden(f"{where}.values", _SELECTOR_VALUES_FORBIDDEN)
        else:
            _invalid_typed(errs, f"{where}.operator", op, _NOT_AN_OPERATOR)
        key = _str(expr, "key") or ""
        errs.each(f"{where}.key", key, qualified_name_errors(key))
        for j, value in enumerate(values):
            errs.each(f"{where}.values[{j}]", value, label_value_errors(value))


def _selector_keys(selector: Mapping[str, Any]) -> list[str]:
    return [_str(e, "key") or "" for e in _seq(selector, "matchExpressions")]


def _match_label_keys(
    errs: _Errors, path: str, match: list[str], mismatch: list[str], selector: Any
) -> None:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys``: the keys are label
    names and need a selector; a key of ``matchLabelKeys`` both in the
    selector's ``matchLabels`` (or an earlier expression) and in one of its
    expressions is refused at ``PATH[i]`` (sic); a key in both lists is."""
    for key, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if not keys:
            continue
        if not isinstance(selector, Mapping):
            errs.forbidden(f"{path}.{key}", "must not be specified when labelSelector is not set")
            continue
        for i, name in enumerate(keys):
            errs.each(f"{path}.{key}[{i}]", name, qualified_name_errors(name))
    if isinstance(selector, Mapping):
        where = {name: i for i, name in enumerate(match)}
        seen = {k for k in _map(selector, "matchLabels") if isinstance(k, str)}
        for name in _selector_keys(selector):
            if name in where and name in seen:
                errs.invalid(f"{path}[{where[name]}]", name, "exists in both matchLabelKeys and labelSelector")
            seen.add(name)
    others = set(mismatch)
    for i, name in enumerate(match):
        if name in others:
            errs.invalid(f"{path}.matchLabelKeys[{i}]", name, "exists in both matchLabelKeys and mismatchLabelKeys")


def _legacy_match_label_keys(errs: _Errors, path: str, match: list[str], selector: Any) -> None:
    """``ValidateMatchLabelKeysInTopologySpread`` (without
    ``MatchLabelKeysInPodTopologySpread`` or its ``SelectorMerge``): the
    keys need a selector, are label names, and none is a key of the
    selector (its ``matchLabels`` or an expression)."""
    if not match:
        return
    keys: set[str] = set()
    if isinstance(selector, Mapping):
        keys = {k for k in _map(selector, "matchLabels") if isinstance(k, str)} | set(_selector_keys(selector))
    else:
        errs.forbidden(path, "must not be specified when labelSelector is not set")
    for i, name in enumerate(match):
        errs.each(f"{path}[{i}]", name, qualified_name_errors(name))
        if name in keys:
            errs.invalid(f"{path}[{i}]", name, "exists in both matchLabelKeys and labelSelector")


# ---------------------------------------------------------------- affinity


def _node_requirement(errs: _Errors, rq: Any, path: str, strict_values: bool) -> None:
    op = _str(rq, "operator") or ""
    values = _strings(rq, "values")
    if op in ("In", "NotIn"):
        if not values:
            errs.required(f"{path}.values", _SELECTOR_VALUES_NEEDED)
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.forbidden(f"{path}.values", _SELECTOR_VALUES_FORBIDDEN)
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
    else:
        _invalid_typed(errs, f"{path}.operator", op, _NOT_AN_OPERATOR)
    key = _str(rq, "key") or ""
    errs.each(f"{path}.key", key, qualified_name_errors(key))
    if strict_values:
        for i, value in enumerate(values):
            errs.each(f"{path}.values[{i}]", value, label_value_errors(value))


def _node_field_requirement(errs: _Errors, rq: Any, path: str) -> None:
    op = _str(rq, "operator") or ""
    values = _strings(rq, "values")
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.required(f"{path}.values",
                          "must be only one value when `operator` is 'In' or 'NotIn' for node field selector")
    else:
        _invalid_typed(errs, f"{path}.operator", op, _NOT_AN_OPERATOR)
    key = _str(rq, "key") or ""
    if key != "metadata.name":
        errs.invalid(f"{path}.key", key, "not a valid field selector key")
        return
    for i, value in enumerate(values):
        errs.each(f"{path}.values[{i}]", value, dns_subdomain_errors(value))


def _node_selector_term(errs: _Errors, term: Any, path: str, strict_values: bool) -> None:
    for j, rq in enumerate(_seq(term, "matchExpressions")):
        _node_requirement(errs, rq, f"{path}.matchExpressions[{j}]", strict_values)
    for j, rq in enumerate(_seq(term, "matchFields")):
        _node_field_requirement(errs, rq, f"{path}.matchFields[{j}]")


def _node_affinity(errs: _Errors, na: Mapping[str, Any], path: str) -> None:
    required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, Mapping):
        terms_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = _seq(required, "nodeSelectorTerms")
        if not terms:
            errs.required(terms_path, "must have at least one node selector term")
        for i, term in enumerate(terms):
            _node_selector_term(errs, term, f"{terms_path}[{i}]", strict_values=True)
    preferred_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, pref in enumerate(_seq(na, "preferredDuringSchedulingIgnoredDuringExecution")):
        weight = _int(pref, "weight") or 0
        if not 1 <= weight <= 100:
            errs.invalid(f"{preferred_path}[{i}].weight", weight, _WEIGHT_RANGE)
        # (a preferred term may name label values no node could carry)
        _node_selector_term(errs, _get(pref, "preference"), f"{preferred_path}[{i}].preference",
                            strict_values=False)


def _pod_affinity_term(errs: _Errors, term: Any, path: str) -> None:
    selector = _get(term, "labelSelector")
    _label_selector(errs, selector, f"{path}.labelSelector")
    _label_selector(errs, _get(term, "namespaceSelector"), f"{path}.namespaceSelector")
    for namespace in _strings(term, "namespaces"):
        errs.each(f"{path}.namespace", namespace, dns_label_errors(namespace))
    _match_label_keys(errs, path, _strings(term, "matchLabelKeys"), _strings(term, "mismatchLabelKeys"),
                      selector)
    topology_key = _str(term, "topologyKey") or ""
    if not topology_key:
        errs.required(f"{path}.topologyKey", "can not be empty")
    errs.each(f"{path}.topologyKey", topology_key, qualified_name_errors(topology_key))


def _pod_affinity(errs: _Errors, pa: Mapping[str, Any], path: str) -> None:
    """``validatePodAffinity`` and ``validatePodAntiAffinity`` (the same)."""
    required_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(_seq(pa, "requiredDuringSchedulingIgnoredDuringExecution")):
        _pod_affinity_term(errs, term, f"{required_path}[{i}]")
    preferred_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, weighted in enumerate(_seq(pa, "preferredDuringSchedulingIgnoredDuringExecution")):
        weight = _int(weighted, "weight") or 0
        if not 1 <= weight <= 100:
            errs.invalid(f"{preferred_path}[{i}].weight", weight, _WEIGHT_RANGE)
        _pod_affinity_term(errs, _get(weighted, "podAffinityTerm"), f"{preferred_path}[{i}].podAffinityTerm")


def _dns_config(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validatePodDNSConfig`` on the defaulted policy (``ClusterFirst``
    when none is given)."""
    config = _get(spec, "dnsConfig")
    config = config if isinstance(config, Mapping) else None
    path = "spec.dnsConfig"
    if (_str(spec, "dnsPolicy") or "ClusterFirst") == "None":
        if config is None:
            errs.required(path, "must provide `dnsConfig` when `dnsPolicy` is None")
            return
        if not _seq(config, "nameservers"):
            errs.required(f"{path}.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is None")
            return
    if config is None:
        return
    servers = _strings(config, "nameservers")
    if len(servers) > _MAX_NAMESERVERS:
        _invalid_typed(errs, f"{path}.nameservers", servers,
                       f"must not have more than {_MAX_NAMESERVERS} nameservers")
    for i, server in enumerate(servers):
        errs.each(f"{path}.nameservers[{i}]", server, ip_errors(server))
    searches = _strings(config, "searches")
    if len(searches) > _MAX_SEARCHES:
        _invalid_typed(errs, f"{path}.searches", searches, f"must not have more than {_MAX_SEARCHES} search paths")
    if go_len(" ".join(searches)) > _MAX_SEARCH_CHARS:
        _invalid_typed(errs, f"{path}.searches", searches,
                       f"must not have more than {_MAX_SEARCH_CHARS} characters (including spaces) in the search list")
    for i, search in enumerate(searches):
        if search != ".":
            search = search.removesuffix(".")
            errs.each(f"{path}.searches[{i}]", search, _subdomain_underscore_errors(search))
    for i, option in enumerate(_seq(config, "options")):
        if not _str(option, "name"):
            errs.required(f"{path}.options[{i}]", "must not be empty")


def check_affinity_and_dns_config(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validateAffinity`` then ``validatePodDNSConfig`` (they follow the
    pod's security context and image pull secrets)."""
    affinity = _get(spec, "affinity")
    if isinstance(affinity, Mapping):
        na = affinity.get("nodeAffinity")
        if isinstance(na, Mapping):
            _node_affinity(errs, na, "spec.affinity.nodeAffinity")
        for key in ("podAffinity", "podAntiAffinity"):
            pa = affinity.get(key)
            if isinstance(pa, Mapping):
                _pod_affinity(errs, pa, f"spec.affinity.{key}")
    _dns_config(errs, spec)


# ---------------------------------------------------------------- spreading


def check_topology_spread_constraints(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validateTopologySpreadConstraints`` (after the scheduling gates)."""
    constraints = [c if isinstance(c, Mapping) else {} for c in _seq(spec, "topologySpreadConstraints")]
    for i, c in enumerate(constraints):
        path = f"spec.topologySpreadConstraints[{i}]"
        skew = _int(c, "maxSkew") or 0
        if skew <= 0:
            errs.invalid(f"{path}.maxSkew", skew, _NOT_POSITIVE)
        topology_key = _str(c, "topologyKey") or ""
        if not topology_key:
            errs.required(f"{path}.topologyKey", "can not be empty")
        when = _str(c, "whenUnsatisfiable") or ""
        if when not in _WHEN_UNSATISFIABLE:
            _unsupported_typed(errs, f"{path}.whenUnsatisfiable", when, _WHEN_UNSATISFIABLE)
        for later in constraints[i + 1:]:
            if (_str(later, "topologyKey") or "") == topology_key and (_str(later, "whenUnsatisfiable") or "") == when:
                errs.duplicate(f"{path}.{{topologyKey, whenUnsatisfiable}}", f"{{{topology_key}, {when}}}")
                break
        min_domains = _int(c, "minDomains")
        if min_domains is not None:
            if min_domains <= 0:
                errs.invalid(f"{path}.minDomains", min_domains, _NOT_POSITIVE)
            if when != "DoNotSchedule":
                errs.invalid(f"{path}.minDomains", min_domains,
                             f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}")
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = _str(c, key)
            if policy is not None and policy not in _NODE_INCLUSION:
                _unsupported_typed(errs, f"{path}.{key}", policy, _NODE_INCLUSION)
        selector = c.get("labelSelector")
        if options().match_label_keys_merge:
            _match_label_keys(errs, path, _strings(c, "matchLabelKeys"), [], selector)
        else:
            _legacy_match_label_keys(errs, f"{path}.matchLabelKeys", _strings(c, "matchLabelKeys"), selector)
        _label_selector(errs, selector, f"{path}.labelSelector")


# ---------------------------------------------------------------- tolerations, host aliases


def check_tolerations_and_host_aliases(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``ValidateTolerations`` then ``ValidateHostAliases`` (after the
    hostname and subdomain, before the priority class)."""
    _tolerations(errs, _seq(spec, "tolerations"), "spec.tolerations")
    for i, alias in enumerate(_seq(spec, "hostAliases")):
        path = f"spec.hostAliases[{i}]"
        ip = _str(alias, "ip") or ""
        errs.each(f"{path}.ip", ip, ip_errors(ip))
        for j, hostname in enumerate(_strings(alias, "hostnames")):
            errs.each(f"{path}.hostnames[{j}]", hostname, dns_subdomain_errors(hostname))


#: ``core.Toleration`` as ``encoding/json`` decodes the tolerations
#: annotation into it (the internal type: no JSON tags, its Go field names
#: matched without regard to case)
_G_TOLERATIONS = GoSlice(GoStruct("core.Toleration", (
    GoField("Key", GO_STRING), GoField("Operator", GoBasic("string", "core.TolerationOperator")),
    GoField("Value", GO_STRING), GoField("Effect", GoBasic("string", "core.TaintEffect")),
    GoField("TolerationSeconds", GoPtr(GoBasic("int64"))))))
_TOLERATIONS_KEY = "scheduler.alpha.kubernetes.io/tolerations"


def check_tolerations_annotation(errs: _Errors, meta: Mapping[str, Any]) -> None:
    """``ValidateTolerationsInPodAnnotations`` (from
    ``ValidatePodSpecificAnnotations``, after the object metadata): a
    non-empty ``scheduler.alpha.kubernetes.io/tolerations`` annotation is
    a JSON list of tolerations (``json.Unmarshal``'s error else), each
    valid as one of ``spec.tolerations``."""
    text = _str(_map(meta, "annotations"), _TOLERATIONS_KEY)
    if not text:
        return
    try:
        value, error = go_json_unmarshal(go_json_parse(text), _G_TOLERATIONS)
    except GoJSONError as e:
        value, error = None, str(e)
    if error is not None:
        errs.invalid("metadata.annotations", _TOLERATIONS_KEY, error)
        return
    items = [{"key": t.get("Key", ""), "operator": t.get("Operator", ""), "value": t.get("Value", ""),
              "effect": t.get("Effect", ""), "tolerationSeconds": t.get("TolerationSeconds")}
             for t in value or []]
    _tolerations(errs, items, f"metadata.annotations.{_TOLERATIONS_KEY}")


def _tolerations(errs: _Errors, tolerations: list[Any], prefix: str) -> None:
    """``ValidateTolerations`` of the list at ``prefix``."""
    for i, t in enumerate(tolerations):
        path = f"{prefix}[{i}]"
        key = _str(t, "key") or ""
        if key:
            errs.each(f"{path}.key", key, qualified_name_errors(key))
        op = _str(t, "operator") or ""
        if not key and op != "Exists":
            _invalid_typed(errs, f"{path}.operator", op,
                           'operator must be Exists when `key` is empty, which means "match all values and all keys"')
        effect = _str(t, "effect") or ""
        if _get(t, "tolerationSeconds") is not None and effect != "NoExecute":
            _invalid_typed(errs, f"{path}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
        value = _str(t, "value") or ""
        if op in ("Equal", ""):
            msgs = label_value_errors(value)
            if msgs:
                errs.invalid(f"{path}.operator", value, ";".join(msgs))
        elif op == "Exists":
            if value:
                errs.invalid(f"{path}.operator", value, "value must be empty when `operator` is 'Exists'")
        elif op in ("Lt", "Gt") and not options().toleration_comparison:
            _unsupported_typed(errs, f"{path}.operator", op, ("Equal", "Exists", "Lt", "Gt"))
        elif op in ("Lt", "Gt"):  # (a decimal integer in canonical form, an int64)
            if not _DECIMAL.fullmatch(value):
                errs.invalid(f"{path}.value", value, "must be non-empty" if not value else
                             "must be a valid decimal integer in canonical form")
            why = parse_int64_error(value)
            if why:
                errs.invalid(f"{path}.value", value, f"strconv.ParseInt: parsing {_q(value)}: {why}")
        else:
            _unsupported_typed(errs, f"{path}.operator", op, ("Equal", "Exists"))
        if effect and effect not in _TAINT_EFFECTS:
            _unsupported_typed(errs, f"{path}.effect", effect, _TAINT_EFFECTS)


# ---------------------------------------------------------------- runtime class, preemption, OS (``validateLinux``, ``validateWindows``: api/pod_validation_os.py)


def check_runtime_class_and_preemption(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``ValidateRuntimeClassName``, then ``ValidatePreemptionPolicy``."""
    runtime_class = _str(spec, "runtimeClassName")
    if runtime_class is not None:
        errs.each("spec.runtimeClassName", runtime_class, dns_subdomain_errors(runtime_class))
    policy = _str(spec, "preemptionPolicy")
    if policy is not None:
        if not policy:
            errs.required("spec.preemptionPolicy")
        elif policy not in _PREEMPTION:
            _unsupported_typed(errs, "spec.preemptionPolicy", policy, _PREEMPTION)


def check_os(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validateOS``, then for a valid name ``validateLinux`` or
    ``validateWindows``."""
    os = _get(spec, "os")
    if not isinstance(os, Mapping):
        return
    name = _str(os, "name") or ""
    if not name:
        errs.required("spec.os.name")
    elif name not in _OS_NAMES:
        _unsupported_typed(errs, "spec.os", name, _OS_NAMES)
    else:
        for path, detail in os_field_errors(spec, name):
            errs.forbidden(path, detail)

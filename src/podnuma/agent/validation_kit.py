"""The field kit of the static-pod validation (:mod:`podnuma.agent.validation`
and its parts, ``validation_scheduling``, ``validation_security``,
``validation_container``): the error list in the words of k8s.io/apimachinery
v0.37.2 ``pkg/util/validation/field`` (``Invalid value``, ``Required value``,
``Unsupported value``...), values quoted as ``field.Error`` quotes them
(a plain string by Go's ``%q``, a named string type by ``json.Marshal``:
the ``*_named`` methods), Go's ``strings.ToLower`` (``go_lower``), the
name rules of ``pkg/util/validation/validation.go`` (label values, port
names, environment variable names, ranges), ``ValidateLabels`` of
``pkg/apis/meta/v1/validation/validation.go``, and readers of a decoded
manifest's fields that skip a value of the wrong type (the decoder has
refused those before validation runs); and the validation options of
k8s.io/kubernetes v1.37.2 ``pkg/api/pod/util.go``
(``GetValidationOptionsFromPodSpecAndMeta``) the kubelet derives from its
feature gates (``PodValidationOptions``, in force for one validation:
``validation_options``, read by ``options()``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from podnuma.api.pod_validation import go_len, qualified_name_errors
from podnuma.errors import InputError
from podnuma.golang.json import go_json_quote

_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

_LABEL_VALUE_TEXT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_ENV_NAME_TEXT = (
    "a valid environment variable name must consist only of printable ASCII characters "
    "other than '='"
)

class _Gates(Protocol):
    def enabled(self, name: str) -> bool: ...


class PodValidationOptions:
    """The options ``GetValidationOptionsFromPodSpecAndMeta``
    (k8s.io/kubernetes v1.37.2 ``pkg/api/pod/util.go``) derives from the
    kubelet's feature gates for a new pod (no old pod), as far as the
    static-pod validation reads them: ``deletion_cost`` (the deletion-cost
    annotation checked: ``PodDeletionCost``), ``env_files`` (the
    ``fileKeyRef`` wording: ``EnvFiles``), ``userns_host_network``
    (``hostNetwork`` allowed with ``hostUsers: false``:
    ``UserNamespacesHostNetworkSupport``), ``only_recursive_selinux``
    (``seLinuxChangePolicy`` only ``Recursive``: ``SELinuxMount`` off),
    ``toleration_comparison`` (``Lt``/``Gt`` tolerations:
    ``TaintTolerationComparisonOperators``), ``restart_rules``
    (``ContainerRestartRules``), ``restart_all`` (the ``RestartAllContainers``
    action: ``RestartAllContainersOnContainerExits``), ``pod_level_resources``
    (``PodLevelResources``), ``match_label_keys_merge`` (a spread
    constraint's ``matchLabelKeys`` checked as pod affinity's, else by the
    legacy rule: ``MatchLabelKeysInPodTopologySpread`` and its
    ``SelectorMerge``), ``strict_ip`` (read directly by ``validation.go``:
    ``StrictIPCIDRValidation``); and, of the v1 defaults before validation,
    ``legacy_pod_defaulting`` (pod-level requests and hugepage limits
    defaulted: ``PodLevelResources`` on, ``PodLevelResourcesFixDefaulting``
    off). The defaults are v1.37's gates."""

    __slots__ = ("deletion_cost", "env_files", "legacy_pod_defaulting", "match_label_keys_merge",
                 "only_recursive_selinux", "pod_level_resources", "strict_ip", "restart_all", "restart_rules", "toleration_comparison",
                 "userns_host_network")

    def __init__(self, gates: _Gates | None = None) -> None:
        def on(name: str, default: bool) -> bool:
            return default if gates is None else gates.enabled(name)

        self.deletion_cost = on("PodDeletionCost", True)
        self.env_files = on("EnvFiles", True)
        self.userns_host_network = on("UserNamespacesHostNetworkSupport", False)
        self.only_recursive_selinux = not on("SELinuxMount", True)
        self.toleration_comparison = on("TaintTolerationComparisonOperators", False)
        self.restart_rules = on("ContainerRestartRules", True)
        self.restart_all = on("RestartAllContainersOnContainerExits", True)
        self.pod_level_resources = on("PodLevelResources", True)
        self.strict_ip = on("StrictIPCIDRValidation", True)
        self.legacy_pod_defaulting = self.pod_level_resources and not on("PodLevelResourcesFixDefaulting", True)
        self.match_label_keys_merge = (on("MatchLabelKeysInPodTopologySpread", True)
                                       and on("MatchLabelKeysInPodTopologySpreadSelectorMerge", True))


_DEFAULT_OPTIONS = PodValidationOptions()
_OPTIONS: ContextVar[PodValidationOptions | None] = ContextVar("podnuma_pod_validation_options", default=None)


def options() -> PodValidationOptions:
    """The validation options of the pod being validated (v1.37's
    defaults outside :func:`validation_options`)."""
    return _OPTIONS.get() or _DEFAULT_OPTIONS


@contextmanager
def validation_options(opts: PodValidationOptions) -> Iterator[None]:
    """``opts`` for the validation run inside the ``with`` block."""
    token = _OPTIONS.set(opts)
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def _q(value: str) -> str:
    """A string as Go's ``%q`` (``strconv.Quote``) shows it: ``"`` and
    ``\\`` escaped, a character Go's ``unicode.IsPrint`` calls printable
    as it is, else ``\\a \\b \\f \\n \\r \\t \\v``, ``\\xNN`` (below
    U+0080), ``\\uNNNN``, ``\\UNNNNNNNN``; a lone surrogate (no UTF-8
    character: Go's decoder made it U+FFFD) as U+FFFD."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            ch, code = "\ufffd", 0xFFFD
        if ch in "\"\\":
            out.append("\\" + ch)
        elif ch == " " or unicodedata.category(ch)[0] in "LMNPS":
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v"}




def go_lower(value: str) -> str:
    """Go's ``strings.ToLower``: each character by ``unicode.ToLower``, the
    simple (one-to-one) case mapping. Python's ``str.lower`` differs only
    where it maps a character to several (U+0130 ``İ``: Go ``i``, Python
    ``i̇``) or by context (a final ``Σ``: Go ``σ``, Python ``ς``); one
    character at a time, the first of several, it agrees with Go on every
    character (checked against Go 1.26 on all of U+0000-U+10FFFF)."""
    if value.isascii():
        return value.lower()
    return "".join(ch.lower()[:1] or ch for ch in value)


def _shown(value: object) -> str:
    if isinstance(value, str):
        return _q(value)
    return str(value)


class _Errors:
    """An ``ErrorList`` being built."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def invalid(self, path: str, value: object, detail: str) -> None:
        self.items.append((path, f"Invalid value: {_shown(value)}: {detail}"))

    def required(self, path: str, detail: str = "") -> None:
        self.items.append((path, "Required value" + (f": {detail}" if detail else "")))

    def unsupported(self, path: str, value: str, supported: tuple[str, ...]) -> None:
        allowed = ", ".join(_q(s) for s in supported)
        self.items.append((path, f"Unsupported value: {_q(value)}: supported values: {allowed}"))

    def forbidden(self, path: str, detail: str) -> None:
        self.items.append((path, f"Forbidden: {detail}"))

    def duplicate(self, path: str, value: str) -> None:
        self.items.append((path, f"Duplicate value: {_q(value)}"))

    # (the value of a named string type: ``core.Protocol``, ``core.DNSPolicy``...)

    def invalid_named(self, path: str, value: str, detail: str) -> None:
        self.items.append((path, f"Invalid value: {go_json_quote(value)}: {detail}"))

    def unsupported_named(self, path: str, value: str, supported: tuple[str, ...]) -> None:
        allowed = ", ".join(_q(s) for s in supported)
        self.items.append((path, f"Unsupported value: {go_json_quote(value)}: supported values: {allowed}"))

    def duplicate_named(self, path: str, value: str) -> None:
        self.items.append((path, f"Duplicate value: {go_json_quote(value)}"))

    def not_found(self, path: str, value: str) -> None:
        self.items.append((path, f"Not found: {_q(value)}"))

    def each(self, path: str, value: str, messages: list[str]) -> None:
        for m in messages:
            self.invalid(path, value, m)

    def raised(self, fn: Callable[[], None]) -> None:
        """The first error a podnuma check raises, as an entry."""
        try:
            fn()
        except InputError as e:
            self.items.append((e.path, e.message))


# ---------------------------------------------------------------- name rules


def label_value_errors(value: str) -> list[str]:
    out = []
    if go_len(value) > 63:
        out.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.fullmatch(value):
        out.append(_LABEL_VALUE_TEXT)
    return out


def env_name_errors(value: str) -> list[str]:
    if any(ord(ch) > 127 or not ch.isprintable() or ch == "=" for ch in value):
        return [_ENV_NAME_TEXT]
    return []


def _range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


# ---------------------------------------------------------------- shapes


def _get(m: Any, key: str) -> Any:
    return m.get(key) if isinstance(m, Mapping) else None


def _map(m: Any, key: str) -> Mapping[str, Any]:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, Mapping) else {}


def _seq(m: Any, key: str) -> list[Any]:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, list) else []


def _str(m: Any, key: str) -> str | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, str) else None


def _int(m: Any, key: str) -> int | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _labels(errs: _Errors, labels: Mapping[str, Any], path: str) -> None:
    """``ValidateLabels`` (a pod's labels, its ``nodeSelector``): each key
    a qualified name, each value a label value; keys in sorted order (Go
    walks the map in no fixed order)."""
    for key in sorted(k for k in labels if isinstance(k, str)):
        errs.each(path, key, qualified_name_errors(key))
        value = labels[key]
        if isinstance(value, str):
            errs.each(path, value, label_value_errors(value))




class NulledQuantity(str):
    """A ``resource.Quantity`` held by value that a ``null`` met after a
    value: its unmarshaller zeroes the amount and leaves the cached text
    and the format the earlier value set (the text here is that value's):
    zero, so unset, to validation; not the absent quantity to the hash."""

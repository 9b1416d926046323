"""Reading the files of ``podnuma compare`` and ``podnuma advise``.

The edge of the what-if commands: pod manifests (one or many YAML
documents, JSON, ``kubectl get pods -o json`` lists), the node (the
scenario contract's ``node`` mapping in a file of its own, or a scenario
file) and the kubelet configuration (a ``KubeletConfiguration`` file, or a
scenario file). Every problem is an :class:`~podnuma.errors.InputError`
naming the file (and the field, with its line when known).

The kubelet's own configuration file is read as ``cmd/kubelet/app/server.go``
``loadConfigFile`` and ``pkg/kubelet/kubeletconfig/configfiles`` read it, its
refusals in the codec's words: Go's JSON scanner for a JSON text that does
not parse (``k8s.io/apimachinery`` ``serializer/json/meta.go`` finding the
kind), ``sigs.k8s.io/yaml``'s ``json.Marshal`` for a YAML ``.inf``/``.nan``.

Also the built-in node and configuration ``advise`` uses when none is given
(:data:`DEFAULT_NODE_YAML`, :data:`DEFAULT_KUBELET_CONFIG_YAML`).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podnuma.api.featuregates import FeatureGates
from podnuma.api.kubeletconfig import (
    GATES_FLAGS,
    GATES_PANIC,
    JSONObject,
    KubeletConfig,
    check_config_file_type,
    json_object_pairs_merged,
    load_kubelet_config,
    not_a_config_object,
    strict_decoding_error,
    yaml_object,
)
from podnuma.cm.container_manager import Node
from podnuma.errors import InputError, KubeletStartupError
from podnuma.fieldkit import wrong_type
from podnuma.golang.jsonnumbers import go_json_integer, go_json_number_text
from podnuma.golang.strconv import go_quote
from podnuma.inputs.discover import load_node
from podnuma.inputs.documents import (
    STDIN_NAME,
    Document,
    decode_text,
    load_json,
    parse_document,
    parse_documents,
    parse_first_document,
)
from podnuma.inputs.overrides import Override, apply_overrides, blame
from podnuma.inputs.scenario import read_referenced
from podnuma.inputs.startup import StartupFailure, startup_failure
from podnuma.inputs.surrogates import LONE_SURROGATE as _LONE_SURROGATE
from podnuma.inputs.text import FILE_FIELDS, NO_FILES, NOWHERE, TextInput
from podnuma.machine.topology import Machine

__all__ = [
    "DEFAULT_NODE_YAML",
    "DEFAULT_KUBELET_CONFIG_YAML",
    "PodSource",
    "load_pod_sources",
    "load_node_file",
    "load_node_text",
    "node_document",
    "load_config_file",
    "load_config_text",
    "config_document",
    "config_source",
    "ConfigSource",
    "default_machine",
    "default_config",
    "node_and_config",
]

#: The node ``advise`` uses without ``--node``: two sockets, one NUMA node
#: each, 8 cores x 2 threads per socket (32 logical CPUs numbered as Linux
#: does on x86: NUMA 0 = CPUs 0-7,16-23, NUMA 1 = CPUs 8-15,24-31), 64Gi of
#: memory per NUMA node.
DEFAULT_NODE_YAML = """\
name: podnuma-2socket
synthetic:
  sockets: 2
  numaNodesPerSocket: 1
  coresPerNumaNode: 8
  threadsPerCore: 2
  memoryPerNumaNode: 64Gi
"""

#: The kubelet configuration ``advise`` uses without ``--kubelet-config``:
#: static CPU manager (one core, CPUs 0 and 16, reserved for the system),
#: Static memory manager, topology policy restricted with scope pod, the
#: pod-level resource managers gates on.
DEFAULT_KUBELET_CONFIG_YAML = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
featureGates:
  PodLevelResources: true
  PodLevelResourceManagers: true
cpuManagerPolicy: static
reservedSystemCPUs: "0,16"
memoryManagerPolicy: Static
kubeReserved: {memory: 512Mi}
systemReserved: {memory: 412Mi}
evictionHard: {memory.available: 100Mi}
reservedMemory:
  - {numaNode: 0, limits: {memory: 1Gi}}
topologyManagerPolicy: restricted
topologyManagerScope: pod
"""


@dataclass(frozen=True)
class PodSource:
    """One object found in a pod file: its place (``file``, document index,
    item index in a List) and its data (not necessarily a Pod)."""

    file: str
    document: int
    item: int | None
    data: Any
    #: the YAML document it is in, with the positions of its fields (None
    #: for JSON, whose errors have no line)
    doc: Document | None = field(default=None, compare=False, repr=False)

    def locate(self, err: InputError) -> InputError:
        """``err`` (its path from this object's top) with the line and column
        of that field in the file, when they are known."""
        if self.doc is None:
            return err
        return self.doc.enrich(err, under="" if self.item is None else f"items[{self.item}]")

    @property
    def where(self) -> str:
        at = f"{self.file}#{self.document}"
        return at if self.item is None else f"{at}.items[{self.item}]"


def _pod_json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of a JSON pod file: a plain mapping, or, with a key given
    twice, a :class:`~podnuma.api.kubeletconfig.JSONObject` (the last value
    wins) that keeps its pairs, so that the pod's decoding refuses the key
    as the API server's strict decoding does (``duplicate field``,
    :func:`podnuma.api.pod_types.check_pod_types`)."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    obj = JSONObject(pairs)
    obj.pairs = pairs
    return obj


def _repeats_a_key(value: Any, skip: str | None = None) -> bool:
    """Whether ``value`` holds an object that gives a key twice (one
    :func:`_pod_json_pairs` kept), the top object's ``skip`` left out."""
    todo: list[Any] = [v for k, v in value.items() if k != skip] if isinstance(value, Mapping) else [value]
    if isinstance(value, JSONObject):
        return True
    while todo:
        v = todo.pop()
        if isinstance(v, JSONObject):
            return True
        if isinstance(v, Mapping):
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return False


#: the workloads whose pod template the pod commands read, and where each
#: keeps it
WORKLOAD_TEMPLATES: Mapping[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}


def _is_pod(value: Any) -> bool:
    """Whether an object of a pod file is read as a Pod (any but a
    workload, :data:`WORKLOAD_TEMPLATES`: the pod's decoding words what is
    wrong with its kind)."""
    kind = value.get("kind") if isinstance(value, Mapping) else None
    return not (isinstance(kind, str) and kind in WORKLOAD_TEMPLATES)


def _check_repeated_keys(text: str, name: str, doc: Any, items: bool) -> None:
    """A key given twice outside a Pod (in a workload, or a List around
    the pods) is refused by the file's reader, as before the pods' strict
    decoding (which words one inside a Pod) was given them: the reader's
    line and column."""
    repeated = (_repeats_a_key(doc, skip="items") or any(
        _repeats_a_key(item) for item in doc.get("items") or () if not _is_pod(item))) if items else (
        not _is_pod(doc) and _repeats_a_key(doc))
    if repeated:
        load_json(text, name=name)  # (raises the reader's error, naming the key and where it is)
        raise InputError("a key given twice", file=name)


def _documents(text: str, name: str) -> list[tuple[Any, Document | None]]:
    """Each document's data, and the document its positions are found in
    (JSON's from its text, when a message needs one). A JSON text's key
    given twice is kept for the pod's decoding (:func:`_pod_json_pairs`);
    YAML's reader refuses it."""
    stripped = text.lstrip()
    if name.lower().endswith(".json"):
        data = load_json(text, name=name, pairs=_pod_json_pairs)
        return [(data, Document(name, data, None, source=text))]
    if stripped.startswith(("{", "[")):
        try:
            data = load_json(text, name=name, pairs=_pod_json_pairs)
            return [(data, Document(name, data, None, source=text))]
        except InputError:
            pass  # flow-style YAML, perhaps
    return [(d.data, d) for d in parse_documents(text, name=name)]


def load_pod_sources(text: str, *, name: str) -> list[PodSource]:
    """Every object of a pod file: each YAML document, and each item of a
    ``List`` (``kubectl get pods -o json|yaml``). Empty documents are skipped.
    Malformed YAML/JSON raises ``InputError`` naming the file."""
    out: list[PodSource] = []
    for i, (doc, marks) in enumerate(_documents(text, name)):
        if doc is None:
            continue
        is_list = isinstance(doc, Mapping) and "items" in doc and (
            doc.get("kind") in ("List", "PodList") or str(doc.get("kind", "")).endswith("List"))
        if marks is not None and marks.root is None:  # (a JSON text)
            _check_repeated_keys(text, name, doc, is_list)
        if is_list:
            items = doc["items"]
            if items is None:  # Go's encoding: a null list is an empty one
                continue
            if not isinstance(items, list):
                where = "items" if i == 0 else f"documents[{i}].items"
                raise wrong_type(where, "a list", items).in_file(name)
            for j, item in enumerate(items):
                out.append(PodSource(name, i, j, item, marks))
            continue
        out.append(PodSource(name, i, None, doc, marks))
    return out


def _mapping_doc(src: TextInput, what: str) -> tuple[Mapping[str, Any], Document]:
    doc = parse_document(src.text, name=src.name)
    if doc.data is None:
        raise InputError(f"the {what} file is empty", file=src.name)
    if not isinstance(doc.data, Mapping):
        raise wrong_type("", f"a mapping (the {what})", doc.data).in_file(src.name)
    return doc.data, doc


def _is_scenario(data: Mapping[str, Any]) -> bool:
    return data.get("kind") == "Scenario" or (
        "node" in data and isinstance(data.get("node"), Mapping) and "steps" in data
    )


#: the node form fields naming a file, made absolute by :func:`node_document`
_NODE_FILE_KEYS = ("sysfs", "machineInfoFile")


def node_document(src: TextInput) -> dict[str, Any]:
    """The node mapping of ``--node`` (see :func:`load_node_text`), checked
    (it loads), with the files it names made absolute, so that a scenario
    written elsewhere with it reads the same machine."""
    load_node_text(src)
    data, _ = _mapping_doc(src, "node")
    node_doc: Any = data["node"] if _is_scenario(data) or set(data) == {"node"} else data
    out = dict(node_doc)
    if src.base_dir is not None:
        for key in _NODE_FILE_KEYS:
            value = out.get(key)
            if isinstance(value, str) and value and not Path(value).is_absolute():
                out[key] = str((src.base_dir / value).resolve())
    return out


def load_node_text(src: TextInput) -> Machine:
    """``--node``: a scenario ``node`` mapping (any machine form; relative
    paths resolve against ``src.base_dir``), a mapping ``{node: {...}}``, or
    a scenario (its ``node``)."""
    data, doc = _mapping_doc(src, "node")
    prefix = ""
    node_doc: Any = data
    if _is_scenario(data) or (set(data) == {"node"}):
        if "node" not in data:
            raise doc.enrich(InputError("the scenario has no node", path="node"))
        node_doc, prefix = data["node"], "node"
        if not isinstance(node_doc, Mapping):
            raise doc.enrich(wrong_type("node", "a mapping", node_doc))
    if src.base_dir is None:
        for field, instead in FILE_FIELDS:
            if field.startswith("node.") and field[5:] in node_doc:
                where = field if prefix else field[5:]
                raise doc.enrich(InputError(f"{NO_FILES}: {instead}", path=where))
    try:
        return load_node(node_doc, base_dir=src.base_dir or NOWHERE)
    except InputError as e:
        raise doc.enrich(e.at(prefix)) from None


def load_node_file(path: str | Path) -> Machine:
    """``--node`` FILE (see :func:`load_node_text`)."""
    return load_node_text(TextInput.read(path, what="node"))


@dataclass(frozen=True)
class ConfigSource:
    """Where the ``KubeletConfiguration`` of ``--kubelet-config`` is:
    ``input``, the file holding it (the one given, or the file a scenario's
    ``kubeletConfigFile`` names); ``prefix``, its field path there
    (``kubeletConfig`` in a scenario holding it inline, else empty); and
    ``data``/``doc``, that file's parsed document."""

    input: TextInput
    prefix: str
    data: Mapping[str, Any]
    doc: Document

    @property
    def mapping(self) -> Mapping[str, Any]:
        """The configuration as written (not decoded)."""
        if not self.prefix:
            return self.data
        raw = self.data.get(self.prefix)
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            raise self.doc.enrich(wrong_type(self.prefix, "a mapping", raw))
        return raw

    def decode(self) -> KubeletConfig:
        """The configuration decoded, or ``InputError`` at its field in
        its file."""
        try:
            return load_kubelet_config(self.mapping, gates_words=self.gates_words)
        except InputError as e:
            raise self.doc.enrich(e.at(self.prefix)) from None

    @property
    def gates_words(self) -> str:
        """How the kubelet refuses a feature gate of this configuration:
        its own file's gates make the v1beta1 defaulting panic; a
        scenario's are set first, as flags are."""
        return GATES_FLAGS if self.prefix else GATES_PANIC

    def startup_failure(self, err: KubeletStartupError, config: KubeletConfig | None,
                        overrides: tuple[Override, ...] = ()) -> StartupFailure:
        """``err`` (the kubelet refusing to start) located at the field of
        the configuration, in the file holding it."""
        if self.prefix:
            return startup_failure(err, file=self.input.name, config=config, overrides=overrides)
        return startup_failure(err, file=self.input.name, config=config,
                               kubelet_config_file=self.input.name, overrides=overrides)


def _config_file_doc(src: TextInput) -> tuple[Mapping[str, Any], Document]:
    """The document of ``--kubelet-config``'s file. A scenario is read as
    every input is (one YAML document, a mapping). The kubelet's own file is
    read as its loader reads ``--config`` (``configfiles.go`` ``Load``, then
    the codec): a file of no bytes is ``kubelet config file "..." was
    empty``; a text whose first character other than white space is ``{``
    is JSON, the whole text (the file's name plays no part); any other text
    is YAML, of which ``sigs.k8s.io/yaml`` decodes the first document only,
    never parsing the ones after it
    (:func:`~podnuma.inputs.documents.parse_first_document`). A first
    document holding nothing (only a comment, a blank line, ``null``) has
    no kind (``failed to decode: Object 'Kind' is missing``)."""
    if not src.text:
        # (the path the kubelet made absolute)
        shown = src.name if src.name == STDIN_NAME else os.path.abspath(src.name)
        raise InputError(f"kubelet config file {go_quote(shown)} was empty", file=src.name)
    # the file's bytes (TextInput.read keeps a byte that is not UTF-8 as a
    # lone surrogate)
    escaped = _LONE_SURROGATE.search(src.text) is not None
    raw = src.text.encode("utf-8", "surrogateescape") if escaped else None
    duplicates: list[str] | None = None
    if _go_trim_space(src.text).startswith("{"):
        # a key given twice: the last value counts (Go's decoder), the
        # strict decoding complains of it; every number kept as Go's
        # decoder meets it: its text (an int field takes "100", not "1e2"
        # or "1.0"; a number of any length is read); a byte that is not
        # UTF-8 is U+FFFD to Go's decoder
        text = _LONE_SURROGATE.sub("\ufffd", src.text)  # (each byte, as Go's decoder replaces it)
        limit = sys.get_int_max_str_digits()
        try:
            got = load_json(text, name=src.name, pairs=json_object_pairs_merged, numbers=go_json_number_text,
                            integers=lambda digits: go_json_integer(digits, limit))
        except InputError:
            # text that is no JSON: the codec's first step (finding the
            # kind) checks the whole text with Go's scanner, and the kubelet
            # prints Go's SyntaxError (the byte it stopped at, as the file has it)
            from podnuma.golang.jsonsyntax import go_json_syntax_error

            why = go_json_syntax_error(raw if raw is not None else src.text)
            if why is None:
                raise
            raise InputError(f"failed to decode: couldn't get version/kind; json parse error: {why}",
                             file=src.name) from None
        if isinstance(got, JSONObject):
            got.source = src.text  # (a value's text as the file has it, a decoder of its own quotes it)
        first = Document(src.name, got, None, source=text)
    else:
        # a key given twice: the last value, and the strict decoding's
        # complaint (a warning, or the error of a kind decoded strictly)
        duplicates = []
        data = raw if raw is not None else src.text
        roots: list[Any] = []
        try:
            first = parse_first_document(data, name=src.name, duplicates=duplicates, prepare=roots.append)
        except InputError as e:
            if roots and _KEY_WORDS.search(e.message) is not None or roots and _NON_FINITE_WORDS.search(e.message):
                # (go-yaml decodes the whole document before sigs.k8s.io/yaml
                # converts its keys, before encoding/json writes a float)
                keyed = _key_error(roots[0])
                if keyed is not None:
                    raise keyed.in_file(src.name) from None
                if _KEY_WORDS.search(e.message) is not None:
                    raise
            outcome = _non_finite(data, src.name, duplicates) if _NON_FINITE_WORDS.search(e.message) else None
            if outcome is None:
                raise
            if isinstance(outcome, InputError):
                raise outcome from None
            first = outcome  # (every such value was replaced by a later key: go-yaml never shows it)
    if isinstance(first.data, Mapping) and _is_scenario(first.data):
        if raw is not None:  # a scenario is UTF-8 text, all of it
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"kubelet configuration file is not UTF-8 text (byte {e.start})",
                                 file=src.name) from None
        return _mapping_doc(src, "kubelet configuration")
    if duplicates is not None and isinstance(first.data, Mapping):
        first = Document(first.name, yaml_object(first.data, duplicates), first.root)
    if first.data is None:
        try:
            check_config_file_type({}, text=src.text)  # no apiVersion, no kind
        except InputError as e:
            raise e.in_file(src.name) from None
    if not isinstance(first.data, Mapping):
        raise not_a_config_object(first.data).in_file(src.name)
    return first.data, first


#: how the YAML reader refuses a key YAMLToJSON does not take (a list or a
#: mapping, null, an integer past int64)
_KEY_WORDS = re.compile(r"invalid YAML: (?:unsupported map key|invalid map key: a key must be a scalar)")


def _key_error(root: Any) -> InputError | None:
    """The codec's refusal of a mapping key in the document: go-yaml's of
    the first key that is a list or a mapping (``yaml: invalid map key:
    %#v``, in the order go-yaml decodes the document: a key before its
    value, a merge where it stands, a list of merges from its last), or of
    a scalar it cannot decode met before (podnuma's words for it); else
    ``sigs.k8s.io/yaml``'s of a null key or one past int64 (a uint64 to
    go-yaml: its type and the key and value printed with ``%+#v``), the
    first one met, where Go's walk of the maps meets one in no fixed order;
    ``None`` where there is none, or podnuma cannot print it."""
    import yaml

    from podnuma.inputs.goyaml import GoYAMLError, go_scalar, go_sharp_v, is_merge_key, null_scalar

    def first_refused(node: Any, path: str) -> yaml.Node | InputError | None:
        """What go-yaml refuses first as it decodes: a key that is a list or
        a mapping, or a scalar it cannot decode (its error, at ``path``)."""
        if isinstance(node, yaml.ScalarNode):
            try:
                go_scalar(node)
            except GoYAMLError as e:
                return InputError(e.message, path=path)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                found = first_refused(item, f"{path}[{i}]")
                if found is not None:
                    return found
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if is_merge_key(k):
                    merged = list(reversed(v.value)) if isinstance(v, yaml.SequenceNode) else [v]
                    for part in merged:
                        found = first_refused(part, path)
                        if found is not None:
                            return found
                    continue
                found = first_refused(k, path)
                if found is not None:
                    return found
                if isinstance(k, yaml.CollectionNode):
                    return k
                found = first_refused(v, f"{path}.{k.value}" if path else str(k.value))
                if found is not None:
                    return found
        return None

    def refused_type(k: Any) -> str | None:
        """The Go type of a key YAMLToJSON refuses, as ``%s`` prints it."""
        if null_scalar(k):
            return "%!s(<nil>)"
        if not isinstance(k, yaml.ScalarNode) or is_merge_key(k):
            return None
        try:
            v = go_scalar(k)[1]
        except GoYAMLError:
            return None
        return "uint64" if isinstance(v, int) and not isinstance(v, bool) and v >= 1 << 63 else None

    bad = first_refused(root, "")
    if isinstance(bad, InputError):
        return bad  # (in podnuma's words, as when it comes first)
    if bad is not None:
        shown = go_sharp_v(bad)
        return None if shown is None else InputError(f"failed to decode: yaml: invalid map key: {shown}")
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, yaml.SequenceNode):
            todo.extend(reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                kind = refused_type(k)
                if kind is not None:
                    shown = go_sharp_v(v, top=True)
                    key = "<nil>" if kind == "%!s(<nil>)" else go_sharp_v(k)
                    if shown is None or key is None:
                        return None
                    return InputError(f"failed to decode: unsupported map key of type: {kind}, key: {key}, "
                                      f"value: {shown}")
            todo.extend(v for _k, v in reversed(node.value))
    return None


#: how the YAML reader refuses ``.inf``, ``-.inf`` and ``.nan``
#: (:mod:`podnuma.inputs.goyaml`), which no JSON holds
_NON_FINITE_WORDS = re.compile(r"' is (?:infinity|NaN), which JSON ")


def _non_finite(data: str | bytes, name: str, duplicates: list[str]) -> InputError | Document | None:
    """The kubelet's error for a YAML configuration file whose first
    document holds ``.inf``, ``-.inf`` or ``.nan`` (an infinite float or
    NaN) as a value: the codec makes the YAML JSON (``sigs.k8s.io/yaml``:
    go-yaml's values through encoding/json's ``Marshal``), which refuses
    the first such float it writes, every object's keys sorted: ``failed
    to decode: json: unsupported value: +Inf`` (``-Inf``, ``NaN``). That
    comes before anything is decoded (the type, unknown fields, keys
    given twice); podnuma adds the field and its line. The document is
    read again with each such value standing as a marker. When no marker
    is left in it (each such value was replaced: a key given again, a
    merge overridden), the document as read (``duplicates``: as
    :func:`parse_first_document` gives them). ``None``: the file is a
    scenario, which keeps the YAML reader's words, or such a value is a
    key."""
    import yaml

    from podnuma.inputs.goyaml import QUOTED, GoYAMLError
    from podnuma.inputs.goyaml import go_scalar as scalar_of

    found: dict[str, tuple[str, yaml.Node]] = {}

    def mark(node: yaml.Node) -> yaml.Node:
        if not isinstance(node, yaml.ScalarNode):
            return node
        try:
            value = scalar_of(node)[1]
        except GoYAMLError:
            return node
        if not isinstance(value, float) or math.isfinite(value):
            return node
        marker = f"\x00non-finite {len(found)}\x00"
        found[marker] = ("NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf", node)
        return yaml.ScalarNode(QUOTED, marker, node.start_mark, node.end_mark)

    def prepare(root: yaml.Node) -> None:
        seen: set[int] = set()
        todo = [root]
        while todo:
            node = todo.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, yaml.MappingNode):
                node.value = [(k, mark(v)) for k, v in node.value]
                todo.extend(n for pair in node.value for n in pair)
            elif isinstance(node, yaml.SequenceNode):
                node.value = [mark(v) for v in node.value]
                todo.extend(node.value)

    seen_twice: list[str] = []
    doc = parse_first_document(data, name=name, duplicates=seen_twice, prepare=prepare)
    if isinstance(doc.data, Mapping) and _is_scenario(doc.data):
        return None

    def first(value: object, path: str) -> tuple[str, str] | None:
        if isinstance(value, str):
            return (value, path) if value in found else None
        if isinstance(value, Mapping):
            for key in sorted(value, key=str):  # (encoding/json sorts a map's keys)
                got = first(value[key], f"{path}.{key}" if path else str(key))
                if got is not None:
                    return got
        elif isinstance(value, list):
            for i, item in enumerate(value):
                got = first(item, f"{path}[{i}]")
                if got is not None:
                    return got
        return None

    got = first(doc.data, "")
    if got is None:
        if not found:  # (a key, not a value: the reader's own words)
            return None
        duplicates.extend(seen_twice)
        return doc
    word, node = found[got[0]]
    where = node.start_mark
    return InputError(f"failed to decode: json: unsupported value: {word} "
                      f"(line {where.line + 1}, column {where.column + 1})", path=got[1], file=name)


def _go_trim_space(text: str) -> str:
    """``text`` without its leading white space as Go's ``unicode.IsSpace``
    knows it (Python's also counts the separators U+001C to U+001F)."""
    i = 0
    while i < len(text) and text[i].isspace() and text[i] not in "\x1c\x1d\x1e\x1f":
        i += 1
    return text[i:]


def config_source(src: TextInput) -> ConfigSource:
    """The file and field path of ``--kubelet-config``'s configuration
    (see :class:`ConfigSource`): a ``KubeletConfiguration`` file, whose
    ``apiVersion`` and ``kind`` the kubelet's loader wants written
    (:func:`~podnuma.api.kubeletconfig.check_config_file_type`); a scenario
    holding it inline (``kubeletConfig``: absent, the kubelet's defaults);
    or the file a scenario's ``kubeletConfigFile`` names, resolved against
    the scenario's directory (the working directory for standard input), as
    ``simulate`` resolves it."""
    data, doc = _config_file_doc(src)
    if not _is_scenario(data):
        # the kubelet's own file: its loader takes the type from the file
        # alone (a scenario's configuration gets v1beta1's when it has none)
        try:
            # (the codec reads a text starting with "{" as JSON, else as YAML)
            check_config_file_type(data, from_yaml=not _go_trim_space(src.text).startswith("{"), text=src.text)
        except InputError as e:
            raise doc.enrich(e) from None
        return ConfigSource(src, "", data, doc)
    if "kubeletConfigFile" not in data:
        return ConfigSource(src, "kubeletConfig", data, doc)
    if "kubeletConfig" in data:
        raise doc.enrich(InputError(
            "give the kubelet configuration inline (kubeletConfig) or as a file "
            "(kubeletConfigFile), not both", path="kubeletConfigFile"))
    if src.base_dir is None:
        raise doc.enrich(InputError(f"{NO_FILES}: {FILE_FIELDS[0][1]}", path="kubeletConfigFile"))
    try:
        target, raw = read_referenced(src.base_dir, data["kubeletConfigFile"], path="kubeletConfigFile",
                                      what="kubelet configuration")
    except InputError as e:
        raise doc.enrich(e) from None
    text = decode_text(raw, what="kubelet configuration", name=str(target))  # (its byte, as read directly)
    named = TextInput(text, str(target), target.parent, f"{target} (the kubeletConfigFile of {src.name})")
    got, got_doc = _mapping_doc(named, "kubelet configuration")
    return ConfigSource(named, "", got, got_doc)


def config_document(src: TextInput | None) -> Mapping[str, Any]:
    """The ``KubeletConfiguration`` document of ``--kubelet-config`` (see
    :func:`config_source`), not decoded; ``None``: the built-in one."""
    if src is None:
        builtin = parse_document(DEFAULT_KUBELET_CONFIG_YAML, name="built-in kubelet configuration").data
        assert isinstance(builtin, Mapping)
        return builtin
    return config_source(src).mapping


def load_config_text(src: TextInput, overrides: tuple[Override, ...] = ()) -> KubeletConfig:
    """``--kubelet-config``: a ``KubeletConfiguration``, or a scenario (its
    ``kubeletConfig``, or the file its ``kubeletConfigFile`` names);
    ``overrides`` (``--set``) applied before it is decoded."""
    return _load_config(config_source(src), overrides)


def _flag_gates(overrides: tuple[Override, ...]) -> dict[str, bool]:
    """The feature gates ``--set`` gives (``featureGates.NAME=BOOL``)."""
    out: dict[str, bool] = {}
    for o in overrides:
        if len(o.keys) == 2 and o.keys[0] == "featureGates" and isinstance(o.keys[1], str) \
                and isinstance(o.value, bool):
            out[o.keys[1]] = o.value
        elif o.keys == ("featureGates",) and isinstance(o.value, Mapping):
            out = {k: v for k, v in o.value.items() if isinstance(k, str) and isinstance(v, bool)}
    return out


def _load_config(source: ConfigSource, overrides: tuple[Override, ...]) -> KubeletConfig:
    if overrides:
        effective = apply_overrides(source.mapping, overrides)
        if not source.prefix:
            # the kubelet sets the flags' gates (alone), then loads its
            # file, whose defaulting panics on a gate of the file it cannot
            # set
            try:
                FeatureGates.from_mapping(_flag_gates(overrides))
            except KubeletStartupError as e:
                raise KubeletStartupError(f"{GATES_FLAGS}: {e}") from None
        # --set models a flag, which the kubelet applies to the
        # configuration its file decoded to: a file that does not decode
        # is refused in its own words, whatever a flag would set; the
        # warning it logged is the file's strict decoding error
        try:
            warning = strict_decoding_error(source.mapping)
        except InputError as e:
            raise source.doc.enrich(e.at(source.prefix)) from None
        if not source.prefix and "featureGates" in source.mapping:
            with contextlib.suppress(InputError):
                load_kubelet_config(source.mapping, gates_words=GATES_PANIC)
        try:
            config = load_kubelet_config(effective)
        except InputError as e:
            blamed = blame(e, overrides)
            raise (blamed if blamed is not e else e if e.file else e.in_file(source.input.name)) from None
        return config.replace(decode_warning=warning)
    return source.decode()


def load_config_file(path: str | Path) -> KubeletConfig:
    """``--kubelet-config`` FILE (see :func:`load_config_text`)."""
    return load_config_text(TextInput.read(path, what="kubelet configuration"))


def default_machine() -> Machine:
    """The built-in node (:data:`DEFAULT_NODE_YAML`)."""
    doc = parse_document(DEFAULT_NODE_YAML, name="built-in node")
    return load_node(doc.data, base_dir=Path("."))


def default_config() -> KubeletConfig:
    """The built-in kubelet configuration (:data:`DEFAULT_KUBELET_CONFIG_YAML`)."""
    doc = parse_document(DEFAULT_KUBELET_CONFIG_YAML, name="built-in kubelet configuration")
    return load_kubelet_config(doc.data)


#: how reports name the built-in node and configuration
DEFAULT_NODE_ORIGIN = "built-in (2 sockets x 8 cores x 2 threads, 64Gi per NUMA node)"
DEFAULT_CONFIG_ORIGIN = "built-in (static CPU, Static memory, restricted, scope pod, reserved CPUs 0,16)"


def node_and_config(
    node: TextInput | None, config_input: TextInput | None, overrides: tuple[Override, ...] = ()
) -> tuple[Machine, KubeletConfig, str, str]:
    """The machine and configuration of the inputs, or the built-in ones
    (``overrides``, ``--set``, applied to the configuration); plus a
    description of where each came from."""
    machine = load_node_text(node) if node is not None else default_machine()
    source = config_source(config_input) if config_input is not None else None
    config: KubeletConfig | None = None
    try:
        if source is not None:
            config = _load_config(source, overrides)
        elif overrides:
            try:
                config = load_kubelet_config(apply_overrides(config_document(None), overrides))
            except InputError as e:
                raise blame(e, overrides) from None
        else:
            config = default_config()
        # The node as configured must start (the what-if runs vary the scope
        # and the pod form, not this): a configuration the kubelet refuses,
        # or one that does not fit the node, is invalid input.
        Node(machine, config)
    except StartupFailure:
        raise
    except KubeletStartupError as e:
        if source is not None:
            raise source.startup_failure(e, config, overrides) from None
        name = "built-in kubelet configuration"
        raise startup_failure(e, file=name, config=config, kubelet_config_file=name,
                              overrides=overrides) from None
    node_from = node.source if node is not None else DEFAULT_NODE_ORIGIN
    cfg_from = source.input.source if source is not None else DEFAULT_CONFIG_ORIGIN
    if overrides:
        cfg_from += " with --set " + ", ".join(str(o) for o in overrides)
    assert config is not None
    return machine, config, node_from, cfg_from

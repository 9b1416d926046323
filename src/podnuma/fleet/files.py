"""Reading the files of a fleet: JSON or YAML documents, the items of
lists, and a JSON dump cut short (its text stops: the only problem is
the end of the data) read up to its last complete item; a JSON text with
an error before its end (a syntax error in the middle, a byte order mark)
is malformed, not cut short: an error naming the line and column.
Problems are :class:`~podnuma.fleet.model.Issue` records."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from podnuma.api.kubeletconfig import json_object_pairs
from podnuma.errors import InputError
from podnuma.fieldkit import field_path, inert, wrong_type
from podnuma.fleet.model import Issue, Severity
from podnuma.golang.jsonnumbers import JSONNumberText
from podnuma.inputs.documents import (
    DuplicateJSONKey,
    MalformedJSON,
    check_tree,
    decode_text,
    field_path_under,
    json_input_error,
    load_json,
    may_hold_surrogates,
    parse_documents,
    read_text,
)
from podnuma.inputs.limits import FLEET_LIMITS

__all__ = ["ItemProblems", "item_left_out", "item_problem", "left_out", "node_damage", "objects_of", "parse_document", "read_document",
           "read_document_text", "read_items"]


def _is_text(x: object) -> TypeGuard[str]:
    """A string, not a number past the float range read as its text
    (:class:`~podnuma.golang.jsonnumbers.JSONNumberText`: a number to Go's
    decoder, and so here)."""
    return isinstance(x, str) and type(x) is not JSONNumberText


def _is_map(x: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(x, Mapping)``, quick for the plain dicts JSON gives."""
    return type(x) is dict or isinstance(x, Mapping)


def _where(e: InputError) -> str:
    """An input error's field path and message (the issue names the file)."""
    return f"{e.path}: {e.message}" if e.path else e.message


def _load_text(path: Path, data: bytes | None = None) -> str:
    """The file's text (``data``: its bytes, already read through the
    bounded path)."""
    if data is not None:
        return decode_text(data, what="input", name=str(path))
    return read_text(path, what="input", name=str(path), limits=FLEET_LIMITS)


def _salvage_items(text: str) -> list[Any]:
    """The complete objects of a JSON ``items`` array cut short."""
    m = re.search(r'"items"\s*:\s*\[', text)
    if m is None:
        return []
    decoder = json.JSONDecoder()
    pos = m.end()
    out: list[Any] = []
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n or text[pos] == "]":
            return out
        try:
            obj, pos = decoder.raw_decode(text, pos)
            check_tree(obj, name="", limits=FLEET_LIMITS)
        except InputError as e:  # (a pod holding a lone surrogate: left out, as in a whole dump)
            obj = _damaged_pod(obj, e)
            if obj is None:
                return out
        except (json.JSONDecodeError, RecursionError):
            return out
        out.append(obj)


#: what the text left after a number's digits at the end of a JSON text
#: cut short can be (``1.``, ``1e``, ``1e+``: Python's decoder reads the
#: digits as a number and stops before them)
_NUMBER_TAIL = re.compile(r"\.|[eE][-+]?")
#: a ``\\u`` escape cut short (the decoder's position is at its ``u``)
_ESCAPE_TAIL = re.compile(r"u[0-9a-fA-F]{0,4}")  # (the decoder says a whole one at the end is invalid too)
#: what may follow where a dump was cut: a line break or spaces written
#: after it, the zeros of a file the crash left its length
_PADDING = " \t\r\n\x00"
#: the beginnings of a JSON value the decoder does not take as one (a
#: literal cut short, a minus sign without its digits)
_VALUE_HEADS = frozenset(("t", "tr", "tru", "f", "fa", "fal", "fals", "n", "nu", "nul", "-"))


def _cut_short(text: str, e: json.JSONDecodeError) -> bool:
    """Whether the JSON ``text`` that Python's decoder refused with ``e``
    only stops too soon (a dump cut short: it is the beginning of a JSON
    text, its one problem the end of the data), rather than being
    malformed (something else than the data's end where the error is: a
    syntax error with text after it, a byte order mark). The decoder stops
    at the first place the text cannot go on as JSON: the text is cut
    short when nothing is left there, or only the beginning of a token
    (a string, a ``\\u`` escape, a literal, a number's fraction or
    exponent) that the end of the data cut. Padding after the cut (white
    space, zero bytes) is not the data: the text without it decides."""
    stripped = text.rstrip(_PADDING)
    if len(stripped) != len(text):
        try:
            json.loads(stripped)  # (where it stops is all that is asked: no hook)
        except json.JSONDecodeError as again:
            text, e = stripped, again
        except (ValueError, RecursionError):
            return False
        else:
            return False  # (whole, then padding: not cut short)
    if e.msg.startswith("Unterminated string"):
        # (a string that runs to the end of the data: every character of it
        # was taken; a control character or a bad escape is said instead)
        return True
    rest = text[e.pos:]
    if not rest:
        return True  # (white space skipped: the end of the data where a value, ":" or "," was due)
    if e.msg.startswith("Invalid \\uXXXX escape"):
        return _ESCAPE_TAIL.fullmatch(rest) is not None
    if e.msg == "Expecting value":
        return rest in _VALUE_HEADS
    if e.msg == "Expecting ',' delimiter" and text[e.pos - 1].isdigit():
        return _NUMBER_TAIL.fullmatch(rest) is not None
    return False


def _decode_error(e: InputError, text: str) -> json.JSONDecodeError | None:
    """The decoder's error behind ``e`` (a :class:`MalformedJSON` of
    ``text``), found again when it was not kept."""
    got = e.__context__
    if isinstance(got, json.JSONDecodeError):
        return got
    try:
        json.loads(text, object_pairs_hook=json_object_pairs)
    except json.JSONDecodeError as again:
        return again
    except (ValueError, RecursionError):
        return None
    return None


#: a typed list's ``kind`` at the head of a dump (before its items)
_LIST_KIND = re.compile(r'^\s*\{[^\[\]{]*?"kind"\s*:\s*"([A-Za-z]+List)"')


def _malformed(path: Path, text: str, msg: str, e: json.JSONDecodeError | None) -> tuple[Any, Issue]:
    """A JSON file the decoder refused (``msg``, ``e``): a dump cut short
    read up to its last complete item (a warning), else an error."""
    items = _salvage_items(text) if e is not None and _cut_short(text, e) else []
    if items:
        head = _LIST_KIND.search(text, 0, min(len(text), 4096))
        return (
            {"kind": head.group(1) if head is not None else "List", "items": items, "_truncated": True},
            Issue(
                "warning",
                f"{msg}: a truncated dump (its text stops before its end); read its first "
                f"{len(items)} complete item(s)",
                file=str(path),
            ),
        )
    return None, Issue("error", msg, file=str(path))


def read_document(path: Path, data: bytes | None = None) -> tuple[Any, Issue | None]:
    """The parsed file (JSON, or YAML for .yaml/.yml; several YAML documents
    become a list), and an issue when it had to be salvaged. An unreadable
    or malformed file gives ``(None, issue)``. ``data``: the file's bytes
    when the caller read them already (through the same bounded read)."""
    text, issue = read_document_text(path, data)
    if text is None:
        return None, issue
    return parse_document(path, text)


def read_document_text(path: Path, data: bytes | None = None) -> tuple[str | None, Issue | None]:
    """The file's text, or ``(None, issue)`` when it cannot be read."""
    try:
        return _load_text(path, data), None
    except InputError as e:
        return None, Issue("error", e.message, file=str(path))


def list_item_kind(kind: Any) -> str | None:
    """The kind of every item of a typed list of kind ``kind`` (``Pod`` of
    a ``PodList``, ``Node`` of a ``NodeList``): Go decodes each item of a
    ``v1.PodList`` as a ``v1.Pod`` whatever it says; ``None`` for a plain
    ``List`` (kubectl's, whose items say their kinds) or no list."""
    if isinstance(kind, str) and len(kind) > 4 and kind.endswith("List"):
        return kind[:-4]
    return None


def typed_items(doc: Any) -> Any:
    """``doc`` (a parsed file: a document, or a YAML file's documents) with
    the items of each typed list (:func:`list_item_kind`) that say no
    ``kind`` given the list's item kind and ``apiVersion``: the API
    server's own lists (``kubectl get --raw /api/v1/pods``, a client's
    list call) leave them off their items, as kubectl's ``-o json`` does
    not. The items are changed in place; ``doc`` is returned."""
    for d in doc if isinstance(doc, list) else (doc,):
        if not _is_map(d):
            continue
        items = d.get("items")
        kind = list_item_kind(d.get("kind"))
        if kind is None or not isinstance(items, list):
            continue
        version = d.get("apiVersion")
        for item in items:
            if isinstance(item, dict) and item.get("kind") in (None, ""):
                item["kind"] = kind
                if item.get("apiVersion") in (None, "") and _is_text(version):
                    item["apiVersion"] = version
    return doc


def parse_document(path: Path, text: str) -> tuple[Any, Issue | None]:
    """:func:`read_document` of the file's ``text``; the items of a typed
    list given its item kind (:func:`typed_items`)."""
    doc, issue = _parse_document(path, text)
    return typed_items(doc), issue


def _parse_document(path: Path, text: str) -> tuple[Any, Issue | None]:
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            found = parse_documents(text, name=str(path), limits=FLEET_LIMITS)
            docs = [d.data for d in found if d.data is not None]
        except InputError as e:
            kept = _yaml_dump_keeping_last(text, str(path))
            if kept is None:
                return None, Issue("error", _where(e), file=str(path))
            docs = kept
        return (docs[0] if len(docs) == 1 else docs), None
    try:
        return load_json(text, name=str(path), limits=FLEET_LIMITS), None
    except DuplicateJSONKey:
        # Go's decoder keeps the last duplicate (the kubelet's lenient
        # configz decoding reports them as a warning): the pairs are kept
        # (the refusal's message, with where the key is repeated, is never
        # read here: that position is not looked for)
        try:
            kept = json.loads(text, object_pairs_hook=json_object_pairs)
            if may_hold_surrogates(text):
                kept = _surrogates_apart(kept, str(path))
            return kept, None
        except InputError as e:
            return None, Issue("error", _where(e), file=str(path))
        except json.JSONDecodeError as e:  # (a duplicate before the problem)
            return _malformed(path, text, json_input_error(e, str(path)).message, e)
        except (ValueError, RecursionError) as e:
            return None, Issue("error", f"invalid JSON: {e}", file=str(path))
    except MalformedJSON as e:
        return _malformed(path, text, e.message, _decode_error(e, text))
    except InputError as e:
        if may_hold_surrogates(text):  # (a pod holding a lone surrogate: that pod left out)
            try:
                return _tolerant_json(text, str(path), e), None
            except InputError as again:
                e = again
        return None, Issue("error", _where(e), file=str(path))


#: the kinds of object a dump holds (a list's items, or a document itself)
_DUMP_KINDS = frozenset(("Pod", "Node", "NodeResourceTopology"))


def _yaml_dump_keeping_last(text: str, name: str) -> list[Any] | None:
    """The values of the YAML ``text``'s documents (``None`` ones left
    out) that the strict reading refused, read as ``sigs.k8s.io/yaml``'s
    non-strict ``Unmarshal`` reads a dump (``kubectl get -o yaml``,
    client-go): a key given twice in a mapping keeps its last value, as a
    JSON dump's does (:func:`parse_document`), rather than refusing the
    file. Only a dump: every document a list (``items``) or a pod, node or
    NodeResourceTopology; ``None`` for anything else (a FleetConfig, a
    configz, YAML that does not parse), which keeps the strict reading's
    refusal."""
    from podnuma.inputs.documents import _compose
    from podnuma.inputs.goyaml import construct

    out: list[Any] = []
    try:
        for root in _compose(text, name, FLEET_LIMITS):
            data = construct(root, [])  # (the keys set again are noted, and the last value kept)
            if data is not None:
                out.append(data)
    except InputError:
        return None
    return out if out and all(_dump_document(d) for d in out) else None


def _dump_document(d: Any) -> bool:
    """Whether a YAML document is a dump's: a ``List`` (or a list of a
    kind the fleet reads, or a mapping with ``items`` and no kind), or an
    object of such a kind."""
    if not _is_map(d):
        return False
    kind = d.get("kind")
    if "items" in d and (kind is None or kind == "List" or list_item_kind(kind) in _DUMP_KINDS):
        return True
    return kind in _DUMP_KINDS


class _DamagedPod(dict[Any, Any]):
    """A pod of a dump holding a lone surrogate (a JSON ``"\\ud800"``
    escape: no UTF-8 for it; the apiserver, which writes UTF-8, serves
    none): ``damage`` says where (its field path inside the pod).
    :func:`left_out` leaves it out and :func:`item_problem` says it, as
    for any damaged pod, rather than the whole file being refused."""

    __slots__ = ("damage",)

    def __init__(self, pod: Mapping[Any, Any], damage: InputError) -> None:
        super().__init__(pod)
        self.damage = damage

    def __reduce__(self) -> tuple[Any, ...]:
        return (_DamagedPod, (dict(self), self.damage))


def _damaged_pod(obj: Any, err: InputError) -> _DamagedPod | None:
    """``obj``, a value :func:`check_tree` refused with ``err``, as a
    :class:`_DamagedPod` when it is a pod refused for a lone surrogate
    only (its other limits kept: checked again without the strings);
    ``None`` otherwise."""
    if not isinstance(obj, dict) or obj.get("kind") != "Pod":
        return None
    try:
        check_tree(obj, name="", limits=FLEET_LIMITS, strings=False)
    except InputError:
        return None
    return _DamagedPod(obj, InputError(err.message, path=err.path))


def _tolerant_json(text: str, name: str, err: InputError) -> Any:
    """The JSON ``text`` that :func:`load_json` refused with ``err``, when
    that was a lone surrogate in a pod (the only problem: the text decodes,
    and is within the limits without its strings checked): decoded again,
    each such pod a :class:`_DamagedPod` (:func:`_surrogates_apart`);
    ``err`` (or the limit the text is over, or a lone surrogate outside a
    pod) raised otherwise. Only a text with a surrogate escape
    (:func:`may_hold_surrogates`) comes here: a clean dump is read once."""
    if len(text) > FLEET_LIMITS.max_bytes:
        raise err
    try:  # (NaN and Infinity refused, as load_json does: no other problem is let through)
        doc = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise err from None
    check_tree(doc, name=name, limits=FLEET_LIMITS, strings=False)
    return _surrogates_apart(doc, name)


def _no_constant(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON value")


def _surrogates_apart(doc: Any, name: str) -> Any:
    """``doc`` (JSON decoded, within the limits, that may hold a lone
    surrogate) with each pod that holds one (an item of a list, or a
    document itself: :func:`objects_of`) made a :class:`_DamagedPod`; a
    lone surrogate anywhere else (a Node, a NodeResourceTopology, a
    configz, a list's own fields) refuses the file, as before: an
    ``InputError`` naming its field path."""
    several = isinstance(doc, list)
    docs: list[Any] = typed_items(doc) if several else [typed_items(doc)]
    for k, d in enumerate(docs):
        at = f"[{k}]" if several else ""
        if _is_map(d) and isinstance(d.get("items"), list) and str(d.get("kind", "List")).endswith("List"):
            _refuse_surrogate({key: v for key, v in d.items() if key != "items"}, name, at)
            items = d["items"]
            for i, item in enumerate(items):
                items[i] = _pod_apart(item, name, field_path(field_path(at, "items"), i))
        else:
            docs[k] = _pod_apart(d, name, at)
    return docs if several else docs[0]


def _pod_apart(item: Any, name: str, at: str) -> Any:
    """``item`` (at ``at``), a :class:`_DamagedPod` when it is a pod
    holding a lone surrogate; an ``InputError`` for another object holding
    one."""
    if _is_map(item) and item.get("kind") == "Pod":
        try:
            check_tree(item, name=name, limits=FLEET_LIMITS)
        except InputError as e:
            return _DamagedPod(item, InputError(e.message, path=e.path))
        return item
    _refuse_surrogate(item, name, at)
    return item


def _refuse_surrogate(value: Any, name: str, at: str) -> None:
    """The refusal of the file for a lone surrogate in ``value`` (at
    ``at`` in the file), with its field path in the file."""
    try:
        check_tree(value, name=name, limits=FLEET_LIMITS)
    except InputError as e:
        raise InputError(e.message, path=field_path_under(at, e.path), file=name) from None


def item_left_out(text: str, name: str, path: str, i: int) -> InputError | None:
    """Why the item whose JSON text is ``text``, the ``i``-th of the list
    at ``path`` (``items``) of the JSON file ``name``, is left out when
    the whole file is read here (:func:`read_document`, then
    :func:`read_objects <podnuma.fleet.inputs.read_objects>`): a pod
    :func:`left_out` leaves out (a lone surrogate in it, a field the
    apiserver validates of another type...), with :func:`item_problem`'s
    words and path. ``None`` when the item is not such a pod, or when its
    text would make the whole file's reading go otherwise (malformed, over
    a limit as nested in its list): the caller then reads the whole file
    here. Lets a dump with a few damaged pods be indexed item by item
    (:func:`podnuma.fleet.podscan.index_pod_file`) with the same outcome
    as this reader's, without building the whole dump."""
    try:
        doc = load_json(text, name=name, limits=FLEET_LIMITS)
    except DuplicateJSONKey:
        # (the whole file is then read keeping the pairs, as Go's decoder)
        try:
            doc = json.loads(text, object_pairs_hook=json_object_pairs)
            if may_hold_surrogates(text):
                doc = _pod_apart(doc, name, "")
        except (InputError, ValueError, RecursionError):
            return None
    except InputError as e:
        if not may_hold_surrogates(text):
            return None
        try:
            doc = _tolerant_json(text, name, e)
        except InputError:
            return None
    if not _is_map(doc) or doc.get("kind") != "Pod" or not left_out(doc):
        return None
    try:  # (nested as in the file: ``{"items": [pod]}``; its strings were checked above)
        check_tree({"items": [doc]}, name=name, limits=FLEET_LIMITS, strings=False)
    except InputError:
        return None
    return item_problem(doc, path, i)


def read_items(path: Path, data: bytes | None = None) -> tuple[list[Any], Issue | None]:
    """The objects of a file: the items of a list, or the object itself.
    ``data``: its bytes, when the caller read them (as :func:`read_document`
    takes them)."""
    doc, issue = read_document(path, data)
    if doc is None:
        return [], issue
    if isinstance(doc, list):
        out: list[Any] = []
        for d in doc:
            out.extend(_items_of(d))
        return out, issue
    return _items_of(doc), issue


def _items_of(doc: Any) -> list[Any]:
    if _is_map(doc) and isinstance(doc.get("items"), list) and (
        str(doc.get("kind", "List")).endswith("List")
    ):
        return list(doc["items"])
    return [doc]


def objects_of(doc: Any, problems: ItemProblems) -> Iterator[tuple[Any, str, int]]:
    """The objects of a parsed file (:func:`read_document`), with where
    they are: ``(item, path, i)``, ``i`` the item's index in the list at
    ``path`` (``items``; ``[2].items`` in the third document of a file
    that holds several), or ``-1`` for an object that is a document itself
    (at ``path``: ``""``, or ``[2]``). A list whose ``items`` is not a list
    gives nothing and is added to ``problems`` (an ``error``: the file's
    objects are not read); ``items: null`` is an empty list (as Go reads
    it)."""
    several = isinstance(doc, list)
    for k, d in enumerate(doc if several else (doc,)):
        at = f"[{k}]" if several else ""
        if _is_map(d) and "items" in d and str(d.get("kind", "List")).endswith("List"):
            items = d["items"]
            if isinstance(items, list):
                path = field_path(at, "items")
                unknown = 0
                for i, item in enumerate(items):
                    if _is_map(item) and item.get("kind") in (None, "") and item_problem(item, path, i) is None:
                        unknown += 1  # (a damaged item is said as such)
                    yield item, path, i
                if unknown:
                    # (a typed list's items were given its item kind: typed_items)
                    problems.add(InputError(
                        f"{unknown} of its {len(items)} item(s) say no kind, and the list's kind "
                        f"({inert(str(d.get('kind') or 'List'))}) does not say it (a typed list such as "
                        "PodList or NodeList does): their kind cannot be known; not read", path=path),
                        "error" if unknown == len(items) else "warning")
            elif items is not None:
                problems.add(wrong_type(field_path(at, "items"), "a list", items), "error")
            continue
        yield d, at, -1


#: the kinds of object a fleet reads whose shape is checked when they are
#: documents themselves (any object in a list is checked)
_CHECKED_KINDS = frozenset(("Pod", "Node", "NodeResourceTopology"))


def _not_read(err: InputError, kind: str, what: str = "not read") -> InputError:
    """``err`` saying what becomes of the object: the apiserver serves no
    object of that shape (it validates every field this checks), so the
    dump is damaged and the object is left out (``what``)."""
    noun = {"Pod": "pod", "Node": "node"}.get(kind, kind)
    return InputError(f"{err.message}: the apiserver serves no such {kind} (a damaged dump); "
                      f"the {noun} is {what}", path=err.path)


def _required_name(meta: Any, at: str = "metadata") -> InputError | None:
    """What is wrong with ``metadata.name`` of an object the apiserver
    served (it always has one: a non-empty string): the apiserver's own
    words for a missing or empty name, else the field kit's."""
    name = meta.get("name") if _is_map(meta) else None
    if meta is not None and not _is_map(meta):
        return wrong_type(at, "a mapping", meta)
    if name is None or name == "":
        return InputError("Required value: name or generateName is required", path=field_path(at, "name"))
    if not _is_text(name):
        return wrong_type(field_path(at, "name"), "a string", name)
    return None


def _invalid_name(name: str) -> InputError | None:
    """What is wrong with an object's ``metadata.name`` that is a string
    but not a DNS subdomain (``../../etc/x``, markup), as the apiserver
    validates the name of a Node (``ValidateNodeName``) and of a custom
    resource such as a NodeResourceTopology (its name is a DNS subdomain
    unless the CRD says otherwise): its words, at ``metadata.name``."""
    from podnuma.api.pod_validation import dns_subdomain_errors

    errors = dns_subdomain_errors(name)
    if not errors:
        return None
    shown = inert(name if len(name) <= 64 else name[:64] + "...")
    return InputError(f'Invalid value: "{shown}": {errors[0]}', path="metadata.name")


def _nrt_name_problem(meta: Any) -> InputError | None:
    """What is wrong with a NodeResourceTopology's ``metadata.name``: none
    (:func:`_required_name`), or not a DNS subdomain (:func:`_invalid_name`:
    it names a node, and a node's name is one; the fleet would look it up,
    name files and the report after it)."""
    bad = _required_name(meta)
    if bad is not None:
        return bad
    return _invalid_name(meta["name"])


def _owner_problem(owners: Any, at: str) -> InputError | None:
    """What is wrong with a pod's ``metadata.ownerReferences`` (``null``:
    none): a list of mappings whose ``kind`` and ``name`` (the replay
    reads them: the pod's workload) are non-empty strings and whose
    ``controller``, when set, is a boolean, as the apiserver validates
    them."""
    if owners is None:
        return None
    if not isinstance(owners, list):
        return wrong_type(at, "a list", owners)
    for k, o in enumerate(owners):
        here = field_path(at, k)
        if not _is_map(o):
            return wrong_type(here, "a mapping", o)
        for key in ("kind", "name"):
            v = o.get(key)
            if v is None or v == "":
                return InputError("Required value", path=field_path(here, key))
            if not _is_text(v):
                return wrong_type(field_path(here, key), "a string", v)
        c = o.get("controller")
        if c is not None and not isinstance(c, bool):
            return wrong_type(field_path(here, "controller"), "a boolean", c)
    return None


def _pod_damage(pod: Mapping[Any, Any]) -> InputError | None:
    """What the apiserver would have made impossible in a pod (a field
    path inside it), among the fields the fleet reads: a pod bound to a
    node (``spec.nodeName`` a non-empty string) without a name (the
    replay names it), ``status`` that is not a mapping, ``status.phase``
    that is not a string (active or not), ``metadata.ownerReferences``
    that is not a list of owner references (its workload). ``None``: none
    of these. (A pod not bound to a node is only counted: it may have no
    name.) :mod:`podnuma.fleet.podscan` refuses the same (its file is then
    read here)."""
    if type(pod) is _DamagedPod:  # (a lone surrogate: its field path)
        return pod.damage
    meta = pod.get("metadata")
    spec = pod.get("spec")
    node = spec.get("nodeName") if _is_map(spec) else None
    if _is_text(node) and node:
        bad = _required_name(meta)
        if bad is not None:
            return bad
    if _is_map(meta):
        bad = _owner_problem(meta.get("ownerReferences"), "metadata.ownerReferences")
        if bad is not None:
            return bad
    status = pod.get("status")
    if status is not None:
        if not _is_map(status):
            return wrong_type("status", "a mapping", status)
        phase = status.get("phase")
        if phase is not None and not _is_text(phase):
            return wrong_type("status.phase", "a string", phase)
    return None


def left_out(item: Any) -> bool:
    """Whether an object :func:`objects_of` gives is left out of the fleet
    for a problem :func:`item_problem` names (a damaged pod, a Node
    without a name, a NodeResourceTopology without a name or whose name is
    not a DNS subdomain). Pure: the index, the replay's
    reading and every process leave out the same."""
    if not _is_map(item):
        return False
    kind = item.get("kind")
    if kind == "Pod":
        return _pod_damage(item) is not None
    if kind == "Node":
        return _required_name(item.get("metadata")) is not None
    if kind == "NodeResourceTopology":
        return _nrt_name_problem(item.get("metadata")) is not None
    return False


def node_damage(node: Mapping[Any, Any]) -> InputError | None:
    """What the apiserver would have made impossible in a named Node (a
    field path inside it), among the fields the fleet reads: labels that
    are not a mapping of strings (node groups select by them),
    ``status`` that is not a mapping, ``status.allocatable`` or
    ``status.capacity`` that is not a mapping of quantities (strings, as
    the apiserver writes them; checked against the configuration; a
    number past the float range read as its text is a number); a
    ``metadata.name`` that is not a string or not a DNS subdomain (the
    apiserver's ``ValidateNodeName``: ``../../etc/x``, markup). The
    message says the node is not replayed (with a bad name: not read, at
    ``metadata.name``)."""
    from podnuma.api.quantity import QuantityError, parse_quantity

    bad: InputError | None = None
    meta = node.get("metadata")
    name = meta.get("name") if _is_map(meta) else None
    labels = meta.get("labels") if _is_map(meta) else None
    if name is not None and not _is_text(name):  # (a number past the float range, read as its text)
        bad = wrong_type("metadata.name", "a string", name)
    elif isinstance(name, str) and (bad := _invalid_name(name)) is not None:
        # the apiserver's ValidateNodeName (a path, markup: never served)
        pass
    elif labels is not None and not _is_map(labels):
        bad = wrong_type("metadata.labels", "a mapping", labels)
    elif labels is not None:
        bad = next((wrong_type(field_path("metadata.labels", str(k)), "a string", v)
                    for k, v in labels.items() if not _is_text(v)), None)
    status = node.get("status")
    if bad is None and status is not None and not _is_map(status):
        bad = wrong_type("status", "a mapping", status)
    elif bad is None and status is not None:
        for key in ("capacity", "allocatable"):
            at = field_path("status", key)
            got = status.get(key)
            if got is None:
                continue
            if not _is_map(got):
                bad = wrong_type(at, "a mapping", got)
                break
            for resource, v in got.items():
                if not _is_text(v):
                    bad = wrong_type(field_path(at, str(resource)), "a string (a quantity)", v)
                    break
                try:
                    parse_quantity(v)
                except (QuantityError, ValueError) as e:
                    shown = inert(v if len(v) <= 64 else v[:64] + "...")
                    bad = InputError(f'Invalid value: "{shown}": {e}', path=field_path(at, str(resource)))
                    break
            if bad is not None:
                break
    if bad is None:
        return None
    # a name that no Node can have: left out (it names a node to no one,
    # and a scenario file cannot be named after it)
    return _not_read(bad, "Node", "not read" if bad.path == "metadata.name" else "not replayed")


def item_problem(item: Any, path: str, i: int) -> InputError | None:
    """What is wrong with the shape of an object :func:`objects_of` gives,
    in the field kit's wording, at its field path: an item of a list that
    is not a mapping, a ``metadata`` or ``spec`` that is not one, a pod's
    ``spec.nodeName`` that is not a string (``None``: nothing, or an object
    that is not in a list and not of a kind the fleet reads); what leaves
    the object out (:func:`left_out`: a damaged pod, a Node without a
    name, a NodeResourceTopology without a name or with a name that is not
    a DNS subdomain), said so. The first found only
    (one per object)."""
    if not _is_map(item):
        return wrong_type(field_path(path, i), "a mapping", item) if i >= 0 else None
    kind = item.get("kind")
    if i < 0 and kind not in _CHECKED_KINDS:
        return None
    here = field_path(path, i) if i >= 0 else path
    if kind == "Pod":
        damage = _pod_damage(item)
        if damage is not None:
            return _not_read(damage, "Pod").at(here)
    elif kind in ("Node", "NodeResourceTopology"):
        damage = _required_name(item.get("metadata")) if kind == "Node" else _nrt_name_problem(item.get("metadata"))
        if damage is not None:
            return _not_read(damage, kind).at(here)
    meta = item.get("metadata")
    spec = item.get("spec")
    if meta is not None and not _is_map(meta):
        at, want, value = "metadata", "a mapping", meta
    elif spec is not None and not _is_map(spec):
        at, want, value = "spec", "a mapping", spec
    elif kind == "Pod" and spec is not None and spec.get("nodeName") is not None and not _is_text(
        spec.get("nodeName")
    ):
        at, want, value = "spec.nodeName", "a string", spec.get("nodeName")
    else:
        return None
    return wrong_type(field_path(here, at), want, value)


class ItemProblems:
    """The problems found in the objects of one file, as issues naming it
    and the field path: the first :attr:`SHOWN` kept, the others counted
    (a dump of a million bad items is one more issue, not a million)."""

    SHOWN = 20

    def __init__(self, file: str) -> None:
        self.file = file
        self.kept: list[Issue] = []
        self.more = 0

    def add(self, err: InputError, severity: Severity = "warning") -> None:
        if len(self.kept) < self.SHOWN:
            self.kept.append(Issue(severity, err.message, file=self.file, path=err.path))
        else:
            self.more += 1

    def issues(self) -> list[Issue]:
        if not self.more:
            return list(self.kept)
        return [*self.kept, Issue("warning", f"{self.more} more object(s) of this file with a field "
                                  "of the wrong type, not listed", file=self.file)]

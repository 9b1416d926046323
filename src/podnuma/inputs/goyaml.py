"""YAML read as the kubelet and kubectl read it, within bounds.

The kubelet and kubectl turn YAML into JSON with ``sigs.k8s.io/yaml``
(``yaml.go``: ``YAMLToJSON``), which decodes with its fork of go-yaml v2
(``go.yaml.in/yaml/v2``: ``resolve.go``, ``decode.go``): YAML 1.1 scalars.
This module reads YAML the same way, so a manifest means to podnuma what it
means to them:

* a plain ``y``, ``Y``, ``yes``, ``on``, ``true`` (and their capitalised
  forms) is ``true``; ``n``, ``no``, ``off``, ``false`` is ``false``; ``~``,
  ``null`` and an empty value are null;
* integers in Go's syntax with ``_`` separators: ``0x1F``, ``0o17``,
  ``0b101``, and a leading ``0`` is octal (``0755`` is 493); floats as Go
  parses them (``.5``, ``1e3``); a float that is a whole number reads as the
  integer the JSON text holds (``2.0`` is ``2``); ``.inf`` and ``.nan``
  cannot be encoded as JSON, so they are refused (as ``YAMLToJSON`` fails);
* timestamps stay the text written (go-yaml keeps a timestamp decoded into
  an untyped value as its string);
* keys become JSON keys: integers, booleans (``true``/``false``) and floats
  (Go's shortest ``float32`` form) are written as strings; a null, list or
  mapping key is refused;
* merge keys (``<<``) copy a mapping's (or a list of mappings') entries into
  the mapping at that point, overwriting entries already there, as go-yaml
  does (the first mapping of a list wins);
* an anchor may be defined again (the later one counts, as in go-yaml).

Where podnuma is stricter than ``YAMLToJSON``: a key given twice in one
mapping is an error (go-yaml keeps the last; kubectl's default strict field
validation refuses it too).

Bounds (:class:`~podnuma.inputs.limits.ReadLimits`) are checked while the
document is composed from the parser's events, before any value is built:
every value an alias adds is counted at the alias (its anchored value's
size, known once that value is complete), as is the nesting an alias
brings; an alias to a value still being composed (a recursive anchor) is
refused. The values built are plain trees: every alias becomes a fresh
copy, so nothing downstream (hashing, JSON encoding, deep copies) ever
meets a shared or cyclic structure.

Parsing uses libyaml's event parser when PyYAML has it (the pure-Python
parser otherwise, and to word the message of a malformed file).
"""

from __future__ import annotations

import base64
import binascii
import decimal
import math
import re
import struct
from collections.abc import Generator, Hashable, Iterable, Iterator
from typing import Any, Final

import yaml

from podnuma.errors import InputError
from podnuma.golang.strconv import go_format_float_g, go_quote
from podnuma.inputs.limits import DEFAULT_LIMITS, ReadLimits
from podnuma.inputs.surrogates import lone_surrogate_message

__all__ = [
    "ComposedPart", "GoYAMLError", "compose_documents", "compose_parts", "construct", "first_document",
    "go_scalar", "is_merge_key", "json_key", "resolve_plain",
]

STR = "tag:yaml.org,2002:str"
BOOL = "tag:yaml.org,2002:bool"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
NULL = "tag:yaml.org,2002:null"
TIMESTAMP = "tag:yaml.org,2002:timestamp"
BINARY = "tag:yaml.org,2002:binary"
MERGE = "tag:yaml.org,2002:merge"
_RESOLVABLE = frozenset({"", STR, BOOL, INT, FLOAT, NULL, TIMESTAMP})
#: the tag a plain scalar without an explicit tag carries in the composed tree
PLAIN = ""
#: the tag a quoted or block scalar without an explicit tag carries
QUOTED = "!"


class NonSpecificScalar(yaml.ScalarNode):
    """A scalar tagged with the non-specific ``!``: go-yaml reads it as a
    quoted scalar (it carries :data:`QUOTED`), PyYAML resolves it as a
    plain one, whatever its style (``! 12`` is an int there): the node's
    class keeps the difference for :func:`~podnuma.inputs.documents.load_safe_yaml`."""

_WORDS: dict[str, tuple[str, Any]] = {}
for _value, _tag, _words in (
    (True, BOOL, ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")),
    (False, BOOL, ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")),
    (None, NULL, ("", "~", "null", "Null", "NULL")),
    (math.nan, FLOAT, (".nan", ".NaN", ".NAN")),
    (math.inf, FLOAT, (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")),
    (-math.inf, FLOAT, ("-.inf", "-.Inf", "-.INF")),
    ("<<", MERGE, ("<<",)),
):
    for _w in _words:
        _WORDS[_w] = (_tag, _value)

# the first character of a scalar decides what it may be
_HINT_WORD = frozenset("yYnNtTfFoO~")
_HINT_DIGIT = frozenset("0123456789")
_HINT_SIGN = frozenset("+-")

# Go's strconv.ParseInt(s, 0, 64) syntax (underscores already removed)
_GO_INT = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_GO_UINT = re.compile(r"(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?\Z")
_BIN_REST = re.compile(r"[+-]?[01]+\Z")
# go-yaml's timestamp layouts (time.Parse): date only, date and time with a
# zone (T or t), date and time separated by a space without zone
_TS = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?:(?:[Tt](?P<H>[0-9]{1,2}):(?P<M>[0-9]{1,2}):(?P<S>[0-9]{1,2})(?:[.,][0-9]+)?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2}))"
    r"|(?: (?P<H2>[0-9]{1,2}):(?P<M2>[0-9]{1,2}):(?P<S2>[0-9]{1,2})(?:[.,][0-9]+)?))?\Z"
)
_INT64 = (-(1 << 63), (1 << 63) - 1)
_UINT64 = (1 << 64) - 1
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
#: go-yaml's spelling of the special floats ``strconv.FormatFloat`` writes
_YAML_SPECIAL_FLOATS = {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}


class GoYAMLError(InputError):
    """A value go-yaml or the JSON encoding would refuse."""


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, then ``ParseUint``; None when neither."""
    if _GO_INT.match(text):
        v = _base_prefixed(text.lstrip("+-"))
        v = -v if text.startswith("-") else v
        if _INT64[0] <= v <= _INT64[1]:
            return v
    if _GO_UINT.match(text):
        u = _base_prefixed(text)
        if u <= _UINT64:
            return u
    return None


def _base_prefixed(body: str) -> int:
    """The value of unsigned digits in Go's base-0 syntax (already matched):
    ``0x``/``0o``/``0b`` prefixes, a leading ``0`` for octal, else decimal."""
    if len(body) > 1 and body[0] == "0" and body[1] in "xXoObB":
        base, digits = {"x": 16, "o": 8, "b": 2}[body[1].lower()], body[2:]
    elif len(body) > 1 and body[0] == "0":
        base, digits = 8, body
    else:
        base, digits = 10, body
    digits = digits.lstrip("0") or "0"
    if len(digits) > 64:
        # more digits than any 64-bit value has in any of these bases: out of
        # range, as Go finds it (and past what int() converts in base 10)
        return _UINT64 + 1
    return int(digits, base)


def _is_timestamp(text: str) -> bool:
    m = _TS.match(text)
    if m is None:
        return False
    year, month, day = int(m["y"]), int(m["m"]), int(m["d"])
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= day <= _DAYS[month - 1] + (1 if month == 2 and leap else 0):
        return False
    hour, minute, second = (m["H"] or m["H2"]), (m["M"] or m["M2"]), (m["S"] or m["S2"])
    if hour is None:
        return True
    return int(hour) < 24 and int(minute) < 60 and int(second) < 60


def _finite_float(text: str) -> float | None:
    v = float(text)
    return None if math.isinf(v) else v  # Go: out of range, not a float


def resolve_plain(value: str, tag: str = "") -> tuple[str, Any]:
    """go-yaml v2's ``resolve(tag, value)``: the tag a scalar resolves to and
    its value (a timestamp's value is its text)."""
    if tag in (STR, BINARY) or not value:
        if not value and tag not in (STR, BINARY):
            return NULL, None
        return (tag or STR), value
    first = value[0]
    if first in _HINT_WORD or first in _HINT_DIGIT or first in _HINT_SIGN or first == ".":
        word = _WORDS.get(value)
        if word is not None:
            return word
        if first == ".":
            if _DOT_FLOAT.match(value):
                f = _finite_float(value)
                if f is not None:
                    return FLOAT, f
        elif first not in _HINT_WORD:
            if tag in ("", TIMESTAMP) and _is_timestamp(value):
                return TIMESTAMP, value
            plain = value.replace("_", "")
            i = _go_int(plain)
            if i is not None:
                return INT, i
            if _YAML_FLOAT.match(plain):
                f = _finite_float(plain)
                if f is not None:
                    return FLOAT, f
            if plain.startswith("0b") and _BIN_REST.match(plain[2:]):
                v = int(plain[2:], 2)
                if _INT64[0] <= v <= _UINT64:
                    return INT, v
            elif plain.startswith("-0b") and re.fullmatch(r"[01]+", plain[3:]):
                v = -int(plain[3:], 2)
                if v >= _INT64[0]:
                    return INT, v
    return STR, value


def _short(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag


def go_scalar(node: yaml.ScalarNode) -> tuple[str, Any]:
    """The tag and value go-yaml decodes a scalar node to (into ``interface{}``)."""
    tag = node.tag
    if tag == QUOTED:
        return STR, node.value
    if tag not in _RESOLVABLE:
        if tag == BINARY:
            text = re.sub(r"[\r\n]", "", node.value)
            try:
                data = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                raise _at(node, "invalid YAML: !!binary value contains invalid base64 data") from None
            return STR, data.decode("utf-8", errors="replace")
        return STR, node.value  # a tag go-yaml does not resolve: the text
    rtag, out = resolve_plain(node.value, tag)
    if tag not in ("", STR) and rtag != tag:
        if tag == FLOAT and rtag == INT:
            return FLOAT, float(out)
        raise _at(node, f"invalid YAML: cannot decode {_short(rtag)} `{node.value}` as a {_short(tag)}")
    return rtag, out


def _at(node: yaml.Node, message: str) -> GoYAMLError:
    m = node.start_mark
    return GoYAMLError(f"{message} (line {m.line + 1}, column {m.column + 1})")


def _json_number(node: yaml.Node, v: float) -> float | int:
    if math.isnan(v) or math.isinf(v):
        word = "NaN" if math.isnan(v) else "infinity"
        raise _at(node, f"{node.value!r} is {word}, which JSON (and so the Kubernetes API) cannot hold")
    # Go writes a whole float64 below 1e21 as an integer: its shortest
    # digits, then zeros (1.8446744073709552e19 is 18446744073709552000);
    # a negative zero as -0, which an unsigned field refuses
    if v == int(v) and abs(v) < 1e21:
        if v == 0 and math.copysign(1.0, v) < 0:
            from podnuma.golang.jsonnumbers import JSONNegativeZero

            return JSONNegativeZero(0)
        return int(decimal.Decimal(repr(v)))
    return v


def _float32_key(v: float) -> str:
    """Go's ``strconv.FormatFloat(v, 'g', -1, 32)`` spelled as go-yaml
    spells the special values."""
    try:
        x = struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        x = math.copysign(math.inf, v)
    text = go_format_float_g(x, 32)
    return _YAML_SPECIAL_FLOATS.get(text, text)


def json_key(node: yaml.Node) -> str:
    """The JSON key ``YAMLToJSON`` makes of a mapping key node."""
    if not isinstance(node, yaml.ScalarNode):
        raise _at(node, "invalid YAML: invalid map key: a key must be a scalar, not a list or mapping")
    tag, v = go_scalar(node)
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        raise _at(node, "invalid YAML: unsupported map key: null (JSON keys are strings)")
    if isinstance(v, int):
        if not _INT64[0] <= v <= _INT64[1]:
            raise _at(node, f"invalid YAML: unsupported map key of type uint64: {node.value}")
        return str(v)
    if isinstance(v, float):
        return _float32_key(v)
    return str(v)


def is_merge_key(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.value == "<<" and node.tag in (PLAIN, MERGE)


# --------------------------------------------------------------------------
# composition


class _Frame:
    __slots__ = ("node", "items", "height", "size", "anchor")

    def __init__(self, node: yaml.CollectionNode, anchor: str | None) -> None:
        self.node = node
        self.items: list[yaml.Node] = []
        self.height = 1  # nesting levels, aliases expanded
        self.size = 1  # values, aliases expanded
        self.anchor = anchor


def _path(stack: list[_Frame]) -> str:
    out = ""
    for frame in stack:
        if isinstance(frame.node, yaml.MappingNode):
            n = len(frame.items)
            if n % 2 == 1 and isinstance(frame.items[-1], yaml.ScalarNode):
                key = str(frame.items[-1].value)
                out = f"{out}.{key}" if out else key
        else:
            out += f"[{len(frame.items)}]"
    return out


def _refuse(stack: list[_Frame], mark: Any, message: str) -> InputError:
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return InputError(f"{message}{where}", path=_path(stack))


def compose_documents(events: Iterable[Any], limits: ReadLimits = DEFAULT_LIMITS) -> list[yaml.Node | None]:
    """The node tree of every document of an event stream, within ``limits``.

    An alias is represented by its anchored node (shared in the tree; the
    values built by :func:`construct` are copies). Raises ``InputError``
    (without a file name) when a bound is passed or an alias is undefined
    or recursive.
    """
    parts = compose_parts(events, limits)
    while True:
        try:
            next(parts)  # (nothing is handed out without a key to split on)
        except StopIteration as done:
            docs: list[yaml.Node | None] = done.value
            return docs


#: what :func:`compose_parts` hands out: the pairs of the first document's
#: top-level mapping before the list it splits (``"head"``), then each item
#: of that list once composed (``"item"``)
ComposedPart = tuple[str, Any]


def compose_parts(
    events: Iterable[Any], limits: ReadLimits = DEFAULT_LIMITS, *, split: str | None = None
) -> Generator[ComposedPart, None, list[yaml.Node | None]]:
    """:func:`compose_documents` (its return value), and, given ``split``,
    the list under that key of the first document's top-level mapping handed
    out an item at a time as it is composed, for a reader that does not hold
    the document whole: first ``("head", pairs)``, the key and value nodes
    of the mapping before that key (when the list starts: an untagged,
    unanchored list under a plain or quoted key ``split`` of an untagged
    top-level mapping), then ``("item", node)`` for each item, which the
    returned tree does not hold (the list is left empty). Every bound is
    counted as for the whole tree."""
    docs: list[yaml.Node | None] = []
    stack: list[_Frame] = []
    anchors: dict[str, yaml.Node] = {}
    # expanded size and height of each complete anchored node
    measured: dict[int, tuple[int, int]] = {}
    open_anchors: set[str] = set()
    root: yaml.Node | None = None
    expanded = 0  # values in the documents so far, aliases expanded
    by_alias = 0
    max_depth, max_nodes, max_alias = limits.max_depth, limits.max_nodes, limits.max_alias_nodes

    def attach(node: yaml.Node, height: int, size: int) -> None:
        nonlocal root
        if stack:
            top = stack[-1]
            if top is split_frame:
                handed.append(node)  # handed out, not kept
                top.size += size
                if height + 1 > top.height:
                    top.height = height + 1
                return
            top.items.append(node)
            top.size += size
            if height + 1 > top.height:
                top.height = height + 1
        else:
            root = node

    count = 0
    documents = 0
    split_frame: _Frame | None = None  # the list handed out an item at a time
    split_done = False
    handed: list[yaml.Node] = []
    ev: Any
    for ev in events:
        cls = type(ev)
        if cls is yaml.ScalarEvent:
            if not ev.value.isascii():  # a "\ud800" escape: a string with no UTF-8
                is_key = bool(stack) and isinstance(stack[-1].node, yaml.MappingNode) and (
                    len(stack[-1].items) % 2 == 0)
                lone = lone_surrogate_message(ev.value, key=is_key)
                if lone is not None:
                    raise _refuse(stack, ev.start_mark, lone)
            tag = ev.tag if ev.tag is not None else (PLAIN if ev.implicit[0] else QUOTED)
            node: yaml.Node = (yaml.ScalarNode if ev.tag != QUOTED else NonSpecificScalar)(
                tag, ev.value, ev.start_mark, ev.end_mark, style=ev.style
            )
            count += 1
            if ev.anchor is not None:
                anchors[ev.anchor] = node
                measured[id(node)] = (1, 0)
            attach(node, 0, 1)
        elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
            if len(stack) + 1 > max_depth:
                raise _refuse(stack, ev.start_mark, f"nested more than {max_depth} levels deep")
            tag = ev.tag if ev.tag is not None else PLAIN
            if cls is yaml.MappingStartEvent:
                coll: yaml.CollectionNode = yaml.MappingNode(
                    tag, [], ev.start_mark, None, flow_style=ev.flow_style)
            else:
                coll = yaml.SequenceNode(tag, [], ev.start_mark, None, flow_style=ev.flow_style)
            count += 1
            if ev.anchor is not None:
                anchors[ev.anchor] = coll
                open_anchors.add(ev.anchor)
            stack.append(_Frame(coll, ev.anchor))
            if (
                split is not None and documents == 1 and len(stack) == 2 and not split_done
                and cls is yaml.SequenceStartEvent and ev.tag is None and ev.anchor is None
                and _splits(stack[0], split)
            ):
                split_frame, split_done = stack[1], True
                yield "head", stack[0].items[:-1]
        elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
            frame = stack.pop()
            if frame is split_frame:
                split_frame = None
            coll = frame.node
            coll.end_mark = ev.end_mark
            items = frame.items
            if isinstance(coll, yaml.MappingNode):
                coll.value = list(zip(items[0::2], items[1::2], strict=True))
            else:
                coll.value = items
            if frame.anchor is not None:
                open_anchors.discard(frame.anchor)
                measured[id(coll)] = (frame.size, frame.height)
            attach(coll, frame.height, frame.size)
        elif cls is yaml.AliasEvent:
            target = anchors.get(ev.anchor)
            if target is None:
                raise _refuse(stack, ev.start_mark, f"unknown anchor {ev.anchor!r} referenced")
            if ev.anchor in open_anchors and any(f.node is target for f in stack):
                raise _refuse(stack, ev.start_mark, f"anchor {ev.anchor!r} value contains itself")
            size, height = measured[id(target)]
            if max_alias <= 0:
                raise _refuse(stack, ev.start_mark, "YAML aliases are not accepted here")
            by_alias += size
            expanded += size
            if by_alias > max_alias:
                raise _refuse(
                    stack, ev.start_mark,
                    f"YAML aliases expand to more than {max_alias} values (an alias bomb?)",
                )
            if expanded + count > max_nodes:
                raise _refuse(stack, ev.start_mark, f"more than {max_nodes} values")
            if len(stack) + height > max_depth:
                raise _refuse(stack, ev.start_mark, f"nested more than {max_depth} levels deep")
            attach(target, height, size)
        elif cls is yaml.DocumentStartEvent:
            documents += 1
            anchors = {}
            open_anchors = set()
            measured = {}
            root = None
        elif cls is yaml.DocumentEndEvent:
            docs.append(root)
            root = None
        if count > max_nodes - expanded:
            raise _refuse(stack, getattr(ev, "start_mark", None), f"more than {max_nodes} values")
        if handed:
            node = handed.pop()
            yield "item", node
    return docs


def _splits(top: _Frame, key: str) -> bool:
    """Whether a list starting now in ``top`` is the value of the key
    ``key`` of an untagged top-level mapping."""
    node, items = top.node, top.items
    if not isinstance(node, yaml.MappingNode) or node.tag != PLAIN or len(items) % 2 != 1:
        return False
    last = items[-1]
    return isinstance(last, yaml.ScalarNode) and last.tag in (PLAIN, QUOTED) and last.value == key


# --------------------------------------------------------------------------
# construction


def construct(node: yaml.Node | None, duplicates: list[str] | None = None) -> Any:
    """The plain value (dicts, lists, str, int, float, bool, None) of a
    composed node tree; every alias a fresh copy. Raises
    :class:`GoYAMLError` (with the field path) for what ``YAMLToJSON``
    refuses. A key given twice in a mapping is an error, unless
    ``duplicates`` is given: then, as ``YAMLToJSON`` does, the value set
    last counts, and each key set again (explicitly or by a merge) is
    noted there as go-yaml v2's strict decoding words it (``line 5: key
    "name" already set in map``: the line of the value, the key as Go's
    ``%#v`` prints it)."""
    if node is None:
        return None
    return _Builder(duplicates).value(node)


def _go_syntax_key(node: yaml.Node) -> str:
    """A mapping key as Go's ``%#v`` prints the value go-yaml decodes it to."""
    if isinstance(node, yaml.ScalarNode):
        try:
            _tag, v = go_scalar(node)
        except GoYAMLError:
            v = node.value
        if v is None:
            return "<nil>"
        if isinstance(v, str | bool | int | float):
            return _go_sharp_v_scalar(v)
    return go_quote(json_key(node))


def _go_key(node: yaml.Node) -> Hashable:
    """A mapping key as the Go value go-yaml decodes it to, compared as Go
    compares interface values: same type and value (a NaN equals nothing,
    not even itself; -0.0 equals 0.0)."""
    if isinstance(node, yaml.ScalarNode):
        try:
            _tag, v = go_scalar(node)
        except GoYAMLError:
            return ("str", node.value)
        if isinstance(v, float) and math.isnan(v):
            return object()
        return (type(v).__name__, v)
    return ("node", json_key(node))


class _Builder:
    def __init__(self, duplicates: list[str] | None = None) -> None:
        self.path: list[str] = []
        self.duplicates = duplicates
        #: the Go keys set in each mapping built, by the mapping's id (merges
        #: add to them); the mapping is held so that its id stays its own
        self._go_keys: dict[int, tuple[dict[str, Any], set[Hashable]]] = {}

    def _fail(self, err: GoYAMLError) -> GoYAMLError:
        path = ""
        for part in self.path:
            path = path + part if part.startswith("[") or not path else f"{path}.{part}"
        return GoYAMLError(err.message, path=path)

    def value(self, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):
            try:
                _tag, v = go_scalar(node)
                if isinstance(v, float):
                    return _json_number(node, v)
            except GoYAMLError as e:
                raise self._fail(e) from None
            return v
        if isinstance(node, yaml.SequenceNode):
            out: list[Any] = []
            path = self.path
            for i, item in enumerate(node.value):
                path.append(f"[{i}]")
                out.append(self.value(item))
                path.pop()
            return out
        mapping: dict[str, Any] = {}
        self._into(node, mapping, set())
        return mapping

    def _into(self, node: yaml.Node, out: dict[str, Any], explicit: set[str]) -> None:
        """Decode mapping ``node`` into ``out`` (go-yaml's ``mapping``)."""
        assert isinstance(node, yaml.MappingNode)
        path = self.path
        for k, v in node.value:
            if is_merge_key(k):
                path.append("<<")
                self._merge(v, out)
                path.pop()
                continue
            try:
                key = json_key(k)
            except GoYAMLError as e:
                raise self._fail(e) from None
            if self.duplicates is not None:
                # set already (explicitly or by a merge): go-yaml notes it
                # once the value is decoded when the key is the same Go
                # value (its map is keyed by interface{}: the int 1, the
                # float 1.0 and the string "1" are three keys, a NaN is
                # never the same); the last value counts for the JSON key
                # (two Go keys that are one JSON key: sigs.k8s.io/yaml
                # keeps the value of whichever its map's random order
                # meets last; podnuma keeps the one written last)
                go_keys = self._go_keys.setdefault(id(out), (out, set()))[1]
                go_key = _go_key(k)
                again = go_key in go_keys
                go_keys.add(go_key)
                path.append(key)
                out[key] = self.value(v)
                path.pop()
                if again:
                    self.duplicates.append(
                        f"line {v.start_mark.line + 1}: key {_go_syntax_key(k)} already set in map")
                continue
            if key in explicit:
                m = k.start_mark
                path.append(key)
                err = self._fail(GoYAMLError(
                    f"duplicate key {key!r} (line {m.line + 1}, column {m.column + 1})"))
                raise err
            explicit.add(key)
            path.append(key)
            out[key] = self.value(v)
            path.pop()

    def _merge(self, node: yaml.Node, out: dict[str, Any]) -> None:
        want = "invalid YAML: map merge requires map or sequence of maps as the value"
        if isinstance(node, yaml.MappingNode):
            self._into(node, out, set())
        elif isinstance(node, yaml.SequenceNode):
            for item in reversed(node.value):  # earlier mappings take precedence
                if not isinstance(item, yaml.MappingNode):
                    raise self._fail(_at(item, want))
                self._into(item, out, set())
        else:
            raise self._fail(_at(node, want))


def events(text: str, *, c_parser: bool) -> Iterator[Any]:
    """The parser's events for ``text`` (libyaml's parser when asked and
    available)."""
    loader_cls: Any = yaml.CSafeLoader if c_parser else yaml.SafeLoader
    loader = loader_cls(text)
    try:
        while loader.check_event():
            yield loader.get_event()
    finally:
        loader.dispose()


def first_document(stream: Iterator[Any], end: list[int]) -> Iterator[Any]:
    """The events of ``stream`` up to the end of its first document, the
    parser asked for nothing after it: go-yaml v2's ``Unmarshal`` (which
    ``sigs.k8s.io/yaml`` decodes with) parses one document and stops when
    the token that ends it (``---``, ``...`` or the end of the text) is
    met, so what follows that token is never scanned. The character index
    where that token starts is appended to ``end``."""
    try:
        for ev in stream:
            yield ev
            if type(ev) is yaml.DocumentEndEvent:
                mark = ev.start_mark
                end.append(mark.index if mark is not None else -1)
                return
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def null_scalar(node: Any) -> bool:
    """Whether ``node`` is a scalar go-yaml decodes to nil (``~``, ``null``,
    an empty plain scalar; not a merge key)."""
    if not isinstance(node, yaml.ScalarNode) or is_merge_key(node):
        return False
    try:
        return go_scalar(node)[1] is None
    except GoYAMLError:
        return False


#: where Go's ``fmt`` puts a key of a ``map[interface {}]interface {}``
#: among keys of other types: a nil key first, then by the address of the
#: key's type descriptor (``internal/fmtsort`` compares interface keys by
#: their type's address before their value: where the linker put the
#: descriptors, the same for every key of a type); as the kubelet oracle
#: (go1.26, linux/amd64) prints them: strings, uint64s, ints, float64s, bools
_KEY_TYPE_RANK: Final = {"str": 0, "uint64": 1, "int": 2, "float": 3, "bool": 4}


def _go_map_key(v: Any) -> tuple[int, Hashable, tuple[Any, ...]] | None:
    """The Go map key go-yaml decodes the scalar ``v`` to: (the rank of its
    type in ``fmt``'s order, the key's identity in a Go map, how ``fmt``
    orders it among keys of its type); ``None`` where podnuma does not
    model it."""
    if v is None:
        return -1, None, ()
    if isinstance(v, bool):
        return _KEY_TYPE_RANK["bool"], ("bool", v), (v,)
    if isinstance(v, int):
        if _INT64[0] <= v <= _INT64[1]:
            return _KEY_TYPE_RANK["int"], ("int", v), (v,)
        if v <= _UINT64:
            return _KEY_TYPE_RANK["uint64"], ("uint64", v), (v,)
        return None
    if isinstance(v, float):
        if math.isnan(v):  # (never the same key; first among floats)
            return _KEY_TYPE_RANK["float"], object(), (0, 0.0)
        return _KEY_TYPE_RANK["float"], ("float", v), (1, v)  # (-0.0 is the key 0.0)
    if isinstance(v, str):
        return _KEY_TYPE_RANK["str"], ("str", v), (v,)
    return None


def _go_sharp_v_entries(node: yaml.MappingNode, entries: dict[Hashable, tuple[int, tuple[Any, ...], str, str]]) -> bool:
    """Set in ``entries`` the keys go-yaml v2 decodes ``node`` to, as it
    sets them: in order, a merge (``<<``) setting its mapping's keys where
    it stands (a list of mappings from the last), a key set again keeping
    the value and the key written last; ``False`` where podnuma does not
    model it."""
    for k, v in node.value:
        if is_merge_key(k):
            parts = v.value if isinstance(v, yaml.SequenceNode) else [v]
            for part in reversed(parts):
                if not isinstance(part, yaml.MappingNode) or not _go_sharp_v_entries(part, entries):
                    return False
            continue
        if not isinstance(k, yaml.ScalarNode):
            return False
        try:
            _tag, key = go_scalar(k)
        except GoYAMLError:
            return False
        found = _go_map_key(key)
        shown = go_sharp_v(v)
        if found is None or shown is None:
            return False
        rank, identity, order = found
        key_text = "interface {}(nil)" if key is None else _go_sharp_v_scalar(key)
        entries.pop(identity, None)
        entries[identity] = (rank, order, key_text, shown)
    return True


def go_sharp_v(node: Any, *, top: bool = False) -> str | None:
    """Go's ``%#v`` of the value go-yaml decodes ``node`` to, in an
    ``interface{}`` (``map[interface {}]interface {}{"a":1, "b":"x"}``,
    ``[]interface {}{"a", true}``, ``interface {}(nil)`` inside them, a
    nil alone ``<nil>`` when ``top``), as go-yaml's ``invalid map key: %#v``
    and sigs.k8s.io/yaml's null-key refusal print it: a map's keys in
    ``fmt``'s order (a nil key, then by type, :data:`_KEY_TYPE_RANK`, then
    by value; NaN keys as written, where Go's order is random); ``None``
    where podnuma does not model it (a key that is a list or a mapping,
    which go-yaml refuses first, a scalar go-yaml refuses, a merge of what
    is not a mapping)."""
    if isinstance(node, yaml.ScalarNode):
        try:
            _tag, v = go_scalar(node)
        except GoYAMLError:
            return None
        if v is None:
            return "<nil>" if top else "interface {}(nil)"
        return _go_sharp_v_scalar(v)
    if isinstance(node, yaml.SequenceNode):
        items = [go_sharp_v(item) for item in node.value]
        if any(i is None for i in items):
            return None
        return "[]interface {}{" + ", ".join(str(i) for i in items) + "}"
    if not isinstance(node, yaml.MappingNode):
        return None
    entries: dict[Hashable, tuple[int, tuple[Any, ...], str, str]] = {}
    if not _go_sharp_v_entries(node, entries):
        return None
    ordered = sorted(entries.values(), key=lambda e: (e[0], e[1]))
    return "map[interface {}]interface {}{" + ", ".join(f"{k}:{v}" for _r, _o, k, v in ordered) + "}"


def _go_sharp_v_scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        # (past int64, go-yaml's uint64, which %#v prints in hexadecimal)
        return str(v) if v <= _INT64[1] else f"{v:#x}"
    if isinstance(v, float):
        return go_format_float_g(v)
    return go_quote(str(v))

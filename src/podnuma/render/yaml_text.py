"""The YAML side of :mod:`podnuma.render.serialize` (which see): PyYAML's
safe dumper in kubectl's style, the scenario dumper with flow-style rows,
and the run document written step by step through one emitter.

Every YAML text podnuma writes goes through the dumper here, and podnuma
reads YAML as the kubelet does (go-yaml v2's resolver,
:mod:`podnuma.inputs.goyaml`), not as PyYAML does. The two resolvers
disagree on plain scalars: ``1e3``, ``1e10``, ``-.5`` and ``0o17`` are
numbers to go-yaml and strings to PyYAML's YAML 1.1 rules, ``y`` and ``N``
booleans to go-yaml only. PyYAML's emitter quotes a string only when its
own resolver would read the plain text as something else, so a pod named
``1e3`` was written plain and read back as a number. The dumper's resolver
therefore also asks the reader's own function
(:func:`~podnuma.inputs.goyaml.resolve_plain`) and reports a string that
go-yaml would resolve to anything but that string as not a string: the
emitter then quotes it (single quotes where it can, as for ``'yes'``). One
function decides, for the reader and for the writers, so they cannot
drift apart; strings PyYAML already quotes stay quoted."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

import yaml

from podnuma.golang.jsonnumbers import JSONFloat, JSONNumberText
from podnuma.inputs.goyaml import resolve_plain
from podnuma.render.yaml_steps import step_text

__all__ = ["dump_safe_yaml", "dump_scenario_yaml", "dump_yaml", "write_yaml_run"]


#: what the emitter found out about each scalar lately (a function of the
#: text and of whether Unicode is written as is; a run's documents repeat
#: the same few hundred scalars), and the tag each scalar resolves to, by
#: (dumper class, text, implicit flags)
_ANALYSES: dict[tuple[str, bool], Any] = {}
_RESOLVED: dict[tuple[type, str, Any], Any] = {}
_KEPT = 8192
#: a plain scalar holding none of these is written in one piece
_SPLITS = (" ", "\n", "\x85", "\u2028", "\u2029")
#: the tag of a string, in PyYAML's resolver and in go-yaml's
_STR = "tag:yaml.org,2002:str"


def _plain_tag(resolved: Any, text: str) -> Any:
    """The tag a plain scalar ``text`` is taken to resolve to when written:
    PyYAML's (``resolved``) unless that is a string and go-yaml's resolver
    (podnuma's reader) makes something else of the text, a number, a
    boolean, a null, a timestamp or a merge key; then go-yaml's, which is
    never a string's, so the emitter quotes a string with that text."""
    if resolved != _STR:
        return resolved
    tag, _ = resolve_plain(text)
    return _STR if tag == _STR else tag


#: the line breaks YAML folds in a quoted or plain scalar, besides \n
_FOLDED_BREAKS = ("\x85", "\u2028", "\u2029")


class _SafeDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, quoting what podnuma's reader would not read
    back as the same string (the module's docstring), lists at their key's
    indentation as PyYAML writes them.

    The pure-Python emitter's per-scalar work is memoised (its analysis of
    a scalar, the tag a scalar resolves to) and a plain scalar that cannot
    be split across lines is written in one piece: the same text, for a
    third less time."""

    def analyze_scalar(self, scalar: str) -> Any:
        key = (scalar, bool(self.allow_unicode))
        got = _ANALYSES.get(key)
        if got is None:
            if len(_ANALYSES) >= _KEPT:
                _ANALYSES.clear()
            got = _ANALYSES[key] = super().analyze_scalar(scalar)
        return got

    def choose_scalar_style(self) -> Any:
        # A line break other than \n (U+0085, U+2028, U+2029) in a single-
        # quoted or plain scalar is folded into a space when it is read
        # back; written double-quoted it is escaped (\N, \L, \P).
        value = getattr(self.event, "value", None)
        if isinstance(value, str) and any(c in value for c in _FOLDED_BREAKS):
            return '"'
        return super().choose_scalar_style()

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        resolve: Any = super().resolve  # untyped in PyYAML
        if kind is not yaml.ScalarNode or type(value) is not str:
            return resolve(kind, value, implicit)
        # (implicit[0]: the question is the tag of the text written plain;
        # the other one, the tag of a quoted scalar, is always a string's)
        if self.yaml_path_resolvers:  # (a resolver that depends on the path: not memoised)
            got = resolve(kind, value, implicit)
            return _plain_tag(got, value) if implicit[0] else got
        key = (type(self), value, implicit)
        got = _RESOLVED.get(key)
        if got is None:
            if len(_RESOLVED) >= _KEPT:
                _RESOLVED.clear()
            got = resolve(kind, value, implicit)
            if implicit[0]:
                got = _plain_tag(got, value)
            _RESOLVED[key] = got
        return got

    def write_plain(self, text: str, split: bool = True) -> None:
        if not text or self.encoding or any(c in text for c in _SPLITS):
            super().write_plain(text, split)
            return
        # what the emitter's loop does for a scalar with no space or break
        if self.root_context:
            self.open_ended = True
        if not self.whitespace:
            self.column += 1
            self.stream.write(" ")
        self.whitespace = False
        self.indention = False
        self.column += len(text)
        self.stream.write(text)


def _json_number(dumper: yaml.SafeDumper, data: JSONFloat) -> yaml.Node:
    """A JSON number kept with its text: that text as a string (unquoted
    it would be a YAML float, ``2.0000000000000000001`` read back as 2; the
    string is the same quantity, ``ParseQuantity`` of the same text). The
    one float field podnuma reads, a configuration's
    ``memoryThrottlingFactor`` (a float64 to Go: its text says no more than
    its float), is written as a float (:func:`_floats_as_floats`)."""
    return dumper.represent_str(data.text)


#: the float64 fields of a KubeletConfiguration podnuma reads
_FLOAT_FIELDS = ("memoryThrottlingFactor",)


def _floats_as_floats(doc: Any) -> Any:
    """``doc`` with a kubelet configuration's float fields (its own, or
    a scenario's ``kubeletConfig``) as plain floats."""
    if not isinstance(doc, dict):
        return doc
    inner = doc.get("kubeletConfig")
    config: dict[Any, Any] = inner if isinstance(inner, dict) else doc
    if not any(type(config.get(f)) is JSONFloat for f in _FLOAT_FIELDS):
        return doc
    plain = {**config, **{f: float(config[f]) for f in _FLOAT_FIELDS if type(config.get(f)) is JSONFloat}}
    return {**doc, "kubeletConfig": plain} if config is not doc else plain


_SafeDumper.add_representer(JSONFloat, _json_number)
# a JSON number past the float range, kept as its text (a ``str``): that text
_SafeDumper.add_representer(JSONNumberText, lambda dumper, data: dumper.represent_str(str(data)))


class _Dumper(_SafeDumper):
    """:class:`_SafeDumper` that indents lists under their key (kubectl style)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def dump_safe_yaml(doc: Any) -> str:
    """``doc`` as ``yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)``
    writes it (block style, keys in order, lists at their key's
    indentation), quoting as podnuma's reader needs (the module's
    docstring)."""
    out: str = yaml.dump(
        _floats_as_floats(doc), Dumper=_SafeDumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    return out


def dump_yaml(doc: Any) -> str:
    """``doc`` as block YAML, keys in order, lists indented under their key."""
    out: str = yaml.dump(
        _floats_as_floats(doc), Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    return out


class _FlowRow(dict[Any, Any]):
    """A mapping written in flow style (``{id: 0, core: 0}``)."""


class _FlowList(list[Any]):
    """A list written in flow style (``[10, 20]``)."""


class _ScenarioDumper(_Dumper):
    """:class:`_Dumper` with flow-style rows and scalar lists."""


def _flow_mapping(dumper: yaml.SafeDumper, data: _FlowRow) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _flow_list(dumper: yaml.SafeDumper, data: _FlowList) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


_ScenarioDumper.add_representer(_FlowRow, _flow_mapping)
_ScenarioDumper.add_representer(_FlowList, _flow_list)


def _mark(value: Any, key: str | None = None) -> Any:
    if isinstance(value, dict):
        return {k: _mark(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        if key == "cpus" and all(isinstance(v, dict) for v in value):
            return [_FlowRow(v) for v in value]
        if all(isinstance(v, int | str) for v in value):
            return _FlowList(value)
        return [_mark(v) for v in value]
    return value


def dump_scenario_yaml(doc: Any) -> str:
    """``doc`` as block YAML with ``cpus`` rows and scalar lists in flow style."""
    out: str = yaml.dump(
        _mark(_floats_as_floats(doc)), Dumper=_ScenarioDumper, sort_keys=False, default_flow_style=False,
        allow_unicode=True,
    )
    return out


#: where the dashes of the document's ``steps`` list are (under a key of
#: the top-level mapping, lists indented under their key)
_STEPS_INDENT = 2


class _Pieces:
    """A text stream that keeps what is written as a list of pieces (the
    emitter's stream in :func:`write_yaml_run`)."""

    __slots__ = ("write",)

    def __init__(self, pieces: list[str]) -> None:
        self.write = pieces.append

    def flush(self) -> None:
        """Nothing to do: the caller joins the pieces."""


def write_yaml_run(
    out: IO[str], node: Any, steps: Iterator[dict[str, Any]],
    tail: Callable[[], tuple[Any, Mapping[str, Any]]],
) -> None:
    """The document through one emitter, step by step: the top-level
    mapping's events are emitted by hand and each step is represented and
    serialized on its own (no object is shared between steps, so no anchor
    spans two of them); the steps after the first that
    :func:`~podnuma.render.yaml_steps.step_text` can write, as the emitter
    would, are written by it instead.

    The emitter writes its many small pieces (a key, an indicator, a
    scalar: about 130 a step) into a list, and ``out`` gets them joined
    after each part of the document: one write a step instead of a write a
    piece (``out`` may be a file whose every write costs more than a
    piece's worth, such as the spool ``simulate`` writes into, which asks
    for its position after each)."""
    pieces: list[str] = []
    sink = _Pieces(pieces)
    dumper = _Dumper(
        sink, default_flow_style=False, sort_keys=False, allow_unicode=True
    )

    def flush() -> None:
        if pieces:
            out.write("".join(pieces))
            pieces.clear()

    try:
        dumper.open()
        dumper.emit(yaml.DocumentStartEvent(explicit=False))
        dumper.emit(yaml.MappingStartEvent(anchor=None, tag=None, implicit=True, flow_style=False))

        def put(value: Any) -> None:
            root = dumper.represent_data(value)
            dumper.anchor_node(root)
            dumper.serialize_node(root, None, None)
            dumper.represented_objects = {}
            dumper.object_keeper = []
            dumper.alias_key = None
            dumper.serialized_nodes = {}
            dumper.anchors = {}
            flush()

        put("node")
        put(node)
        put("steps")
        first = next(steps, None)
        if first is None:
            put([])
        else:
            dumper.emit(yaml.SequenceStartEvent(anchor=None, tag=None, implicit=True, flow_style=False))
            put(first)
            # the steps after the first written without the emitter where
            # :func:`step_text` can (the same text): the emitter, in the
            # list after an item, starts the next one, written by it or not,
            # with a line break (the first one's lines end past the list's
            # indentation, as every item's do)
            resolve: Any = dumper.resolve  # untyped in PyYAML

            def tag(text: str) -> str:
                return str(resolve(yaml.ScalarNode, text, (True, False)))

            for step in steps:
                text = step_text(step, _STEPS_INDENT, tag)
                if text is None:
                    put(step)
                else:
                    out.write(text)
            dumper.emit(yaml.SequenceEndEvent())
        checkpoints, extra = tail()
        put("checkpoints")
        put(checkpoints)
        for key, value in extra.items():
            put(key)
            put(value)
        dumper.emit(yaml.MappingEndEvent())
        dumper.emit(yaml.DocumentEndEvent(explicit=False))
        dumper.close()
        flush()
    finally:
        dumper.dispose()

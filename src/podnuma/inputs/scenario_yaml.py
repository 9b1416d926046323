"""A YAML scenario file read in one pass, a step at a time.

The YAML twin of :class:`~podnuma.inputs.scenario_stream.JSONStepReader`
(the same methods, the same promises): the file is parsed by libyaml's C
parser as it is read, its events composed within the read limits exactly
as for the whole document (:func:`~podnuma.inputs.goyaml.compose_parts`
counts every bound over the whole file), the top-level fields before
``steps`` handed out first, then each step, composed and decoded when the
run reaches it, its nodes dropped after. Memory does not grow with the
number of steps (only anchored nodes are kept, for the aliases that may
name them).

Whatever this reading cannot take -- a problem anywhere (malformed YAML,
a bound passed, text that is not UTF-8, a second document, a value
``YAMLToJSON`` refuses) or a layout it does not stream (``steps`` not the
last key, a tagged or anchored list, a duplicate ``steps``) -- goes to
the whole read (:func:`~podnuma.inputs.documents.parse_document`), whose
verdict and wording are the answer, as they are when the file is read
whole; a file the whole read takes after all is read whole
(:class:`~podnuma.inputs.scenario_stream.ReadWhole`).

A speed module (memory): what the whole read does, in one pass and flat
memory.
"""

from __future__ import annotations

import codecs
from collections.abc import Generator, Iterator, KeysView
from typing import Any, NoReturn

import yaml

from podnuma.errors import InputError
from podnuma.inputs.documents import Document, parse_document
from podnuma.inputs.goyaml import PLAIN, ComposedPart, compose_parts, construct
from podnuma.inputs.scenario_stream import ReadWhole, ScenarioFile
from podnuma.inputs.text import TextInput

__all__ = ["YAMLStepReader"]

_HAVE_LIBYAML = bool(getattr(yaml, "__with_libyaml__", False))
#: the most bytes read for one request of the parser
_CHUNK = 1 << 20


class _Doubt(Exception):
    """What the one-pass reading cannot take (the whole read decides)."""


class _Text:
    """The file as text for the YAML parser, read as it asks: UTF-8
    decoded a chunk at a time, within the size limit."""

    def __init__(self, src: ScenarioFile) -> None:
        self._src = src
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._done = False
        self._offset = 0  # the bytes handed to the parser so far

    def read(self, size: int) -> str:
        while not self._done:
            # (the whole read, when asked for on an error, reads the file
            # to its end: what follows comes from its copy then)
            data = self._src.read_at(self._offset, max(4, min(size, _CHUNK)))
            self._offset += len(data)
            final = not data
            if self._src.over_limit:
                raise _Doubt
            try:
                text = self._utf8.decode(data, final)
            except UnicodeDecodeError:
                raise _Doubt from None
            self._done = final
            if text:
                return text
        return ""


class YAMLStepReader:
    """The top-level mapping of a YAML :class:`ScenarioFile` read in one
    pass: the fields before ``key`` (:meth:`head`), then the items of the
    list under ``key`` one at a time (:meth:`items`). :meth:`check` gives
    the whole read's verdict on the file, as
    :meth:`~podnuma.inputs.scenario_stream.JSONStepReader.check` does."""

    def __init__(self, src: ScenarioFile, key: str = "steps") -> None:
        self.src = src
        self.key = key
        self.limits = src.limits
        self._parts: Generator[ComposedPart, None, list[yaml.Node | None]] = compose_parts(
            self._events(), self.limits, split=key
        )
        self._cleared = False
        self._refusal: Exception | None = None  # the whole read's, once made
        self._head: KeysView[str] | None = None
        self._whole: Document | None = None  # the whole read's, once asked for
        self._head_pairs = -1  # the key-value pairs before the list

    def _events(self) -> Iterator[Any]:
        loader_cls: Any = yaml.CSafeLoader if _HAVE_LIBYAML else yaml.SafeLoader
        loader = loader_cls(_Text(self.src))
        try:
            while loader.check_event():
                yield loader.get_event()
        finally:
            loader.dispose()

    def _next(self) -> ComposedPart | None:
        """The next part (``None``: the stream's end, its documents checked
        for the layout); anything the reading cannot take goes to the whole
        read."""
        try:
            return next(self._parts)
        except StopIteration as done:
            docs: list[yaml.Node | None] = done.value
            root = docs[0] if len(docs) == 1 else None
            if not isinstance(root, yaml.MappingNode) or not root.value:
                self._refuse()
            if len(root.value) != self._head_pairs + 1:
                raise ReadWhole(self.src.text()) from None  # fields after the list
            return None
        except (_Doubt, yaml.YAMLError, InputError, RecursionError, ValueError):
            self._refuse()

    def check(self) -> None:
        """The whole read's verdict: its refusal, or ``ReadWhole`` when the
        file is not laid out for this reading, or nothing."""
        if self._cleared:
            return
        if self._refusal is not None:  # asked again: the verdict is known
            raise self._refusal
        text = self.src.text()
        if self._whole is None:
            try:
                self._whole = parse_document(text.text, name=text.name, limits=self.limits)
            except Exception as refusal:
                self._refusal = refusal
                raise
        data = self._whole.data
        keys = list(data) if isinstance(data, dict) else []
        if self._head is None or keys[-1:] != [self.key] or keys[:-1] != list(self._head):
            raise ReadWhole(text)
        self._cleared = True

    def _refuse(self) -> NoReturn:
        self.check()
        raise ReadWhole(self.src.text())

    def whole(self) -> TextInput:
        """The whole text (for the whole-document path)."""
        return self.src.text()

    def whole_tree(self) -> tuple[yaml.Node | None, str | None]:
        """The whole read's node tree (for a field's line and column; call
        after :meth:`check`), as :class:`Document` holds it: the tree or
        the text to compose it from."""
        if self._whole is None:
            text = self.src.text()
            self._whole = parse_document(text.text, name=text.name, limits=self.limits)
        return self._whole.root, self._whole.source

    def head(self) -> dict[str, Any]:
        """The top-level fields before the list (``ReadWhole`` when the
        file does not lay its top-level mapping out so)."""
        part = self._next()
        if part is None or part[0] != "head":
            raise ReadWhole(self.src.text())
        pairs: list[yaml.Node] = part[1]
        self._head_pairs = len(pairs) // 2
        node = yaml.MappingNode(PLAIN, list(zip(pairs[0::2], pairs[1::2], strict=True)))
        try:
            top = construct(node)
        except InputError:
            self._refuse()
        if not isinstance(top, dict) or self.key in top:
            raise ReadWhole(self.src.text())  # a duplicate (or merged) list key
        self._head = top.keys()
        return top

    def items(self) -> Iterator[Any]:
        """The list's items, each composed and decoded when asked for; then
        the rest of the file is read and checked."""
        while True:
            part = self._next()
            if part is None:
                return
            try:
                value = construct(part[1])
            except InputError:
                self._refuse()
            yield value

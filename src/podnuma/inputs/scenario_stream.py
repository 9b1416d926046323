"""A JSON scenario file read in one pass, a step at a time.

``podnuma simulate FILE.json -o json|yaml`` plays a scenario of any length
in memory that does not grow with its steps: the file is read in chunks,
the top-level fields before ``steps`` are decoded first (the scenario's
head: node, configuration, starting state), then each step is decoded,
checked against the read limits and handed out when the run reaches it.
Nothing of the text is kept but the chunk being decoded; a copy of the
bytes read goes to a temporary file, for the paths that need the whole
text again (an error's line and column, an input refused as a whole).

Refusals, their wording and their order are those of reading the file
whole (:func:`~podnuma.inputs.documents.read_text`, then
:func:`~podnuma.inputs.documents.load_json_streamed`): a file the whole
read refuses (too large, not UTF-8, malformed JSON anywhere, a duplicate
key, ``NaN``, nested too deep, too many values) is refused with that
read's message even when the run has played steps before its problem is
reached (the output is not printed before the run ends). Each step is
decoded by the standard library's C decoder (by msgspec's, faster, in a
file of :data:`MSGSPEC_FROM` bytes or more: importing msgspec costs more
than it saves on a short scenario); what it cannot tell
(duplicate keys; the limits) is checked by cheap bounds on the step's
text, and any step the bounds cannot clear sends the whole file through
the whole read, which gives the verdict. A file that is not laid out as
``{..., "steps": [...]}`` with ``steps`` last is read whole
(:class:`ReadWhole`).

A speed module: what the whole read does, in one pass and flat memory.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator, KeysView
from types import FunctionType
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Final, NoReturn

from podnuma.errors import InputError
from podnuma.inputs.documents import (
    JSONListStream,
    _count_values,
    _json_constant,
    _json_float,
    _json_pairs,
    decode_text,
    input_name,
    load_json_streamed,
    may_hold_surrogates,
    open_input,
    read_failure,
    wait_for_writer,
)
from podnuma.inputs.limits import DEFAULT_LIMITS, ReadLimits
from podnuma.inputs.pathtext import open_text, parent_text
from podnuma.inputs.spool import spooled
from podnuma.inputs.text import TextInput

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["JSONStepReader", "ReadWhole", "ScenarioFile"]

#: bytes asked for per read
_CHUNK = 1 << 20
#: raw bytes kept in memory before the copy moves to a temporary file
_SPOOL = 1 << 20

_SPACE: Final = re.compile(r"[ \t\n\r]*")
#: the checks' decoder: duplicate keys, ``NaN`` and ``Infinity`` refused (a
#: ``ValueError``), as the whole read refuses them; a number past the float
#: range kept as its text, as the whole read keeps it (both decoders)
_STRICT: Final = json.JSONDecoder(
    object_pairs_hook=_json_pairs, parse_constant=_json_constant, parse_float=_json_float
)
_PLAIN = json.JSONDecoder(parse_float=_json_float)
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]
#: what ``_PLAIN.raw_decode`` calls: (value, end), or StopIteration when no value starts there
_scan: Final[Any] = _PLAIN.scan_once  # type: ignore[attr-defined]
#: from how many bytes of a file its steps are decoded by msgspec: importing
#: it costs about 12 ms of CPU (without typing_extensions:
#: :mod:`podnuma.inputs.msgspec_import`; docs/speed.md), it saves about 3 us a
#: step compiled (5-10 us pure Python, with the check of a step's pairs and
#: the pod's key), and a step is about 130-250 bytes (not ``Final``: the
#: compiled build reads it from the module, where tests lower it)
MSGSPEC_FROM = 1 << 19
#: ``msgspec.json.Encoder().encode`` and what it raises, once msgspec is imported
_encode: Any = None
_encode_errors: tuple[type[BaseException], ...] = ()


def _probe() -> None:
    """A Python function when this module runs as Python, a builtin one
    when it is compiled (the full build)."""


#: whether this module runs compiled: a step's key-value pairs are then
#: counted on its value (faster than writing the value back, which pure
#: Python counts faster)
_COMPILED: Final = not isinstance(_probe, FunctionType)


def _shape(value: Any) -> tuple[int, int, int]:
    """The key-value pairs in ``value`` at every depth, its values (itself
    and every value in it, as :func:`~podnuma.inputs.documents.check_tree`
    counts them: keys are not values) and its depth (how many containers
    deep its deepest value is nested; 0 for a scalar), in one walk (a
    mapping's values taken as a list: compiled, the loop then runs over a
    list's items)."""
    if type(value) is dict:
        pairs = len(value)
        children: list[Any] = list(value.values())
    elif type(value) is list:
        pairs = 0
        children = value
    else:
        return 0, 1, 0
    values = 1
    deepest = 0
    for v in children:
        if type(v) is dict or type(v) is list:
            p, n, d = _shape(v)
            pairs += p
            values += n
            if d > deepest:
                deepest = d
        else:
            values += 1
    return pairs, values, deepest + 1


class ReadWhole(Exception):  # noqa: N818 (not an error: a change of reading)
    """The file cannot be streamed: its whole text, read (and held within
    the limits) for the whole-document path."""

    def __init__(self, text: TextInput) -> None:
        super().__init__(text.name)
        self.text = text


class _Doubt(Exception):
    """A step the fast checks cannot clear."""


class ScenarioFile:
    """A scenario file argument, opened, not yet read: ``name`` (how
    messages name it) and ``base_dir`` (where the paths it names resolve),
    as :meth:`TextInput.read` gives them; ``directory``, ``base_dir`` as
    text (the file is opened and its directory found without importing
    :mod:`pathlib`: :mod:`podnuma.inputs.pathtext`)."""

    def __init__(
        self, path: str | Path, *, what: str = "scenario", limits: ReadLimits = DEFAULT_LIMITS
    ) -> None:
        self._path = open_text(path)
        self.name = input_name(path)
        self.directory = parent_text(path)
        self.origin = str(path)
        self.what = what
        self.limits = limits
        self._fh: BinaryIO | None = open_input(self._path, what=what, name=self.name)
        try:  # (a byte read to tell whether a named pipe has a writer: read first)
            self._first = wait_for_writer(self._fh, what=what, name=self.name)
        except BaseException:
            self._fh.close()
            raise
        self._copy: IO[bytes] = spooled(_SPOOL)  # closed by close()
        self._total = 0
        self._text: str | None = None

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self._path)

    @property
    def base_dir(self) -> Path:
        from pathlib import Path

        return Path(self.directory)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        self._copy.close()

    def read(self, size: int) -> bytes:
        """Up to ``size`` more bytes (``b""`` at the end; never past one
        byte over the limit), copied aside."""
        fh = self._fh
        if fh is None:
            return b""
        size = min(size, self.limits.max_bytes + 1 - self._total)
        if size <= 0:
            return b""
        try:
            if self._first:
                data, self._first = self._first[:size], self._first[size:]
            else:
                data = fh.read(size)
        except OSError as e:
            raise read_failure(e, what=self.what, name=self.name) from None
        self._total += len(data)
        self._copy.write(data)
        return data

    def read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` (at most the bytes read so
        far: from the copy, when :meth:`text` read ahead of a reader)."""
        if offset >= self._total:
            return self.read(size)
        self._copy.seek(offset)
        data = self._copy.read(min(size, self._total - offset))
        self._copy.seek(0, 2)
        return data

    @property
    def read_so_far(self) -> int:
        """The bytes read so far."""
        return self._total

    @property
    def over_limit(self) -> bool:
        return self._total > self.limits.max_bytes

    def text(self) -> TextInput:
        """The whole file as :meth:`TextInput.read` gives it, with its
        refusals (too large, not UTF-8)."""
        if self._text is None:
            while self.read(_CHUNK):
                pass
            if self.over_limit:
                raise InputError(
                    f"{self.what} file is larger than the limit of {self.limits.max_bytes} bytes",
                    file=self.name,
                )
            self._copy.seek(0)
            self._text = decode_text(self._copy.read(), what=self.what, name=self.name)
            self._copy.seek(0, 2)
        return TextInput(self._text, self.name, self.base_dir, self.origin)


class JSONStepReader:
    """The JSON object of a :class:`ScenarioFile` read in one pass: the
    fields before ``key`` (:meth:`head`), then the items of the list under
    ``key`` one at a time (:meth:`items`).

    :meth:`check` gives the whole read's verdict on the file: its refusal
    raised, or nothing when it would take it (then no later step needs the
    bounds). Call it before reporting any error about the file, so that a
    problem of the file as a whole comes first, as it does when it is read
    whole.
    """

    def __init__(self, src: ScenarioFile, key: str = "steps") -> None:
        self.src = src
        self.key = key
        self.limits = src.limits
        self._window = ""
        self._pos = 0
        self._eof = False
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._nodes = 0
        self._cleared = False  # the whole read took the file
        self._head: KeysView[str] | None = None
        #: msgspec's decoder and what it raises, for a file of MSGSPEC_FROM
        #: bytes or more (set by :meth:`head`, which reads the first chunk)
        self.decoder: Any = None
        self._decode_errors: tuple[type[BaseException], ...] = ()

    # -- the text, a chunk at a time ------------------------------------

    def _more(self, at_least: int = _CHUNK) -> bool:
        """Append at least ``at_least`` more bytes' text to the window
        (dropping what was consumed); ``False`` at the end of the file."""
        if self._eof:
            return False
        if self._pos:
            self._window = self._window[self._pos:]
            self._pos = 0
        want = max(at_least, _CHUNK)
        data = self.src.read(want)
        final = not data or self.src.over_limit
        try:
            text = self._utf8.decode(data, final)
        except UnicodeDecodeError:
            self._refuse()  # not UTF-8 text
        if final:
            self._eof = True
            if self.src.over_limit:
                self._refuse()
        self._window += text
        return bool(text) or not self._eof

    def _skip(self) -> str:
        """The next character that is not JSON whitespace (``""``: the end)."""
        while True:
            self._pos = _SPACE.match(self._window, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._window):
                return self._window[self._pos]
            if not self._more():
                return ""

    def check(self) -> None:
        """The whole read's verdict (see the class): its refusal, or
        ``ReadWhole`` when the file is not laid out for streaming (fields
        after the list), or nothing."""
        if self._cleared:
            return
        text = self.src.text()
        got = load_json_streamed(text.text, name=text.name, key=self.key, limits=self.limits)
        if not isinstance(got, JSONListStream) or self._head is None or got.top.keys() != self._head:
            raise ReadWhole(text)
        self._cleared = True

    def _refuse(self) -> NoReturn:
        """What the fast path cannot take: the whole read decides (its
        refusal), and a file it takes after all is read whole."""
        self.check()
        raise ReadWhole(self.src.text())

    def whole(self) -> TextInput:
        """The whole text (for the whole-document path)."""
        return self.src.text()

    def whole_tree(self) -> tuple[Any, str | None]:
        """What a :class:`~podnuma.inputs.documents.Document` of the whole
        file locates a field in (after :meth:`check`): no tree, the text to
        compose it from when a position is asked for."""
        return None, self.src.text().text

    # -- the head --------------------------------------------------------

    def head(self) -> dict[str, Any]:
        """The top-level fields before the list (``ReadWhole`` when the file
        does not open as ``{..., "KEY": [``)."""
        try:
            while True:
                try:
                    top, pos, nodes = self._scan_head()
                    break
                except (_Doubt, ValueError, IndexError, RecursionError):
                    if self._eof:
                        raise _Doubt from None
                    self._more(2 * len(self._window))
        except _Doubt:
            raise ReadWhole(self.src.text()) from None
        self._pos, self._nodes = pos, nodes
        self._head = top.keys()
        if self.src.read_so_far >= MSGSPEC_FROM:
            self.decoder, self._decode_errors = _msgspec_decoder()
        return top

    def _scan_head(self) -> tuple[dict[str, Any], int, int]:
        text, space, limits = self._window, _SPACE.match, self.limits
        if limits.max_depth < 3:
            raise _Doubt
        i = space(text, 0).end()  # type: ignore[union-attr]
        if text[i] != "{":
            raise _Doubt
        i = space(text, i + 1).end()  # type: ignore[union-attr]
        pairs: list[tuple[str, Any]] = []
        nodes = 1
        while True:
            if text[i] != '"':
                raise _Doubt
            k, i = _scanstring(text, i + 1)
            i = space(text, i).end()  # type: ignore[union-attr]
            if text[i] != ":":
                raise _Doubt
            i = space(text, i + 1).end()  # type: ignore[union-attr]
            if k == self.key:
                if text[i] != "[":
                    raise _Doubt
                top = _json_pairs(pairs)  # a duplicate: ValueError
                return top, i + 1, nodes + 1
            value, i = _STRICT.raw_decode(text, i)
            try:
                nodes = _count_values(value, 1, nodes, name=self.src.name, limits=limits)
            except InputError:
                raise _Doubt from None
            pairs.append((k, value))
            i = space(text, i).end()  # type: ignore[union-attr]
            if text[i] != ",":
                raise _Doubt
            i = space(text, i + 1).end()  # type: ignore[union-attr]

    # -- the items -------------------------------------------------------

    def items(self) -> Iterator[Any]:
        """The list's items, each decoded when asked for; then the rest of
        the file is read and checked (``ReadWhole`` when more fields
        follow the list)."""
        space = _SPACE.match
        scan = _scan
        decode = self.decoder
        errors = self._decode_errors
        first = True
        while True:
            # the next character that is not whitespace (``_skip`` when the
            # window runs out)
            window = self._window
            pos = self._pos = space(window, self._pos).end()  # type: ignore[union-attr]
            c = window[pos] if pos < len(window) else self._skip()
            if c == "]":
                self._pos += 1
                break
            if not first:
                if c != ",":
                    self._refuse()
                window = self._window
                pos = self._pos = space(window, self._pos + 1).end()  # type: ignore[union-attr]
                if pos >= len(window):
                    self._skip()
            first = False
            window, pos = self._window, self._pos
            # the item: where the usual separator of two objects (``}, {``)
            # next follows in the window, if msgspec decodes the text up to
            # it as one value (then it is the object that starts here: the
            # standard library's decoder ends it there and gives the same
            # value, or refuses it, where msgspec refuses nothing it
            # takes); else decoded by the plain decoder's scanner
            # (what ``_decode`` does, without its calls) when it ends inside
            # the window, and by ``_decode`` when not
            end = window.find("}, {", pos) + 1 if decode is not None else 0
            if end:
                text = window[pos:end]
                try:
                    value = decode(text)
                except errors:
                    end = 0
                else:
                    self._pos = end
                    # (msgspec takes no NaN or Infinity: no words to look for)
                    yield value if self._cleared else self._checked(text, value, False)
                    continue
            try:
                value, end = scan(window, pos)
            except (StopIteration, ValueError, RecursionError):
                end = len(window)
            if end == len(window):
                window, pos, value, end = self._decode()
            self._pos = end
            yield value if self._cleared else self._checked(window[pos:end], value)
        c = self._skip()
        if c == ",":
            raise ReadWhole(self.src.text())
        if c != "}":
            self._refuse()
        self._pos += 1
        if self._skip() != "" or self.src.over_limit:
            self._refuse()

    def _checked(self, s: str, value: Any, words: bool = True) -> Any:
        """``value``, the item of text ``s``, once the fast checks clear it
        (decoded again strictly when they do not; the whole read decides
        when the bounds do not clear it). ``words``: whether the text may
        hold the words ``NaN`` or ``Infinity`` outside its strings.

        Compiled, a text with no escape and no such word is first held to
        the value's own shape (:func:`_shape`, one walk, cheaper there than
        counting three more characters in the text): as many pairs as the
        text has colons (no pair dropped, no colon in a string), nested
        within the depth limit, and its values (exact, where the text's
        count is a bound) within the limit on values; a text that does not
        clear so takes the checks below."""
        limits = self.limits
        if _COMPILED and "\\" not in s and not (words and ("NaN" in s or "Infinity" in s)):
            try:
                pairs, values, depth = _shape(value)
            except RecursionError:  # (Python's own limit, run as Python): the checks below
                pairs = values = depth = -1
            if pairs == s.count(":") and 2 + depth <= limits.max_depth:
                self._nodes += values
                if self._nodes > limits.max_nodes:
                    self.check()  # the bounds do not clear it: the whole read decides
                return value
        colons = s.count(":")
        lists = s.count("[")
        shallow = 2 + s.count("{") + lists <= limits.max_depth
        if (
            "\\" in s or (words and ("NaN" in s or "Infinity" in s))
            or not self._colons_kept(colons, value, shallow)
        ):
            try:  # escapes, words or keys the plain decoder may have let by
                value = _STRICT.raw_decode(s)[0]
            except (ValueError, RecursionError):
                self._refuse()
            if may_hold_surrogates(s):  # a "\ud800" escape: the whole read refuses a lone one
                self.check()
        self._nodes += 1 + colons + s.count(",") + lists
        if not shallow or self._nodes > limits.max_nodes:
            self.check()  # the bounds do not clear it: the whole read decides
        return value

    def _decode(self) -> tuple[str, int, Any, int]:
        """The window, where the next item starts in it, the item, and
        where it ends (more text read as needed)."""
        while True:
            window, pos = self._window, self._pos
            try:
                value, end = _PLAIN.raw_decode(window, pos)
            except (ValueError, RecursionError):
                if self._more(2 * (len(window) - pos)):
                    continue
                self._refuse()
            if end == len(window) and self._more():
                continue  # a number or a word may go on in the next chunk
            return window, pos, value, end

    @staticmethod
    def _colons_kept(colons: int, value: Any, shallow: bool = False) -> bool:
        """Whether ``value`` holds every key-value pair of its text, which
        has ``colons`` colons and no escape: a duplicate key drops a pair,
        and its colon, from the text written back; colons inside strings
        are in both. (Counted on the value first when compiled, or msgspec
        is not loaded, and the text is ``shallow``, within the depth limit:
        as many pairs as the text has colons leaves no colon in a string
        and no pair dropped. The value is written back by msgspec when it is
        loaded, else by the standard library.)"""
        encode = _encode
        if (_COMPILED or encode is None) and shallow and _shape(value)[0] == colons:
            return True
        if encode is None:  # msgspec not loaded: the standard library's encoder
            try:
                return colons == json.dumps(value).count(":")
            except (TypeError, ValueError, OverflowError, RecursionError):
                return False
        try:
            written: bytes = encode(value)
        except _encode_errors:
            return False
        return colons == written.count(b":")


def _msgspec_decoder() -> tuple[Any, tuple[type[BaseException], ...]]:
    """msgspec's JSON decoder's ``decode`` and what it raises on text it
    refuses; msgspec imported (and its encoder set for the check of a
    step's pairs)."""
    global _encode, _encode_errors
    import podnuma.inputs.msgspec_import  # noqa: F401 (msgspec without typing_extensions)

    # isort: split
    import msgspec

    if _encode is None:
        _encode = msgspec.json.Encoder().encode
        _encode_errors = (TypeError, ValueError, OverflowError, msgspec.EncodeError)
    # (a number with a fraction or an exponent read as the other decoders read it)
    return msgspec.json.Decoder(float_hook=_json_float).decode, (msgspec.DecodeError, RecursionError)

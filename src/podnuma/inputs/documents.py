"""Every file and stream podnuma reads, and the one wording of input errors.

The one reading path for YAML and JSON, whatever the door (files,
standard input, HTTP bodies, agent manifests, fleet dumps, live API
answers):

* :func:`read_bytes` / :func:`read_text`: a path, or ``-`` for standard
  input, read up to the byte limit; ``InputError`` naming the file when it
  cannot be read, is larger, or is not UTF-8;
* :func:`parse_document` / :func:`parse_documents`: YAML (or JSON) into
  plain values, keeping the node tree so an error at a field path can name
  that field's line (``error: FILE: FIELD.PATH: MESSAGE (line L, column C)``);
* :func:`load_json`: JSON alone (API answers, dumps), without the tree.

Every one of them works within :class:`~podnuma.inputs.limits.ReadLimits`
(bytes, nesting depth, values, values added by YAML aliases); the values
returned are plain trees (no shared or cyclic parts). YAML reads as the
kubelet and kubectl read it (:mod:`podnuma.inputs.goyaml`: YAML 1.1 scalars
as go-yaml resolves them); a key given twice is an error. JSON is read with
:mod:`json` (duplicate keys, ``NaN`` and ``Infinity`` refused, as Go's
decoder refuses the last two).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from podnuma.errors import InputError
from podnuma.golang.jsonnumbers import json_float
from podnuma.inputs.limits import DEFAULT_LIMITS, ReadLimits
from podnuma.inputs.pathtext import open_text
from podnuma.inputs.surrogates import LONE_SURROGATE as _LONE_SURROGATE
from podnuma.inputs.surrogates import lone_surrogate_message

if TYPE_CHECKING:
    from pathlib import Path

    import yaml

# PyYAML and the YAML readers (:mod:`podnuma.inputs.goyaml`,
# :mod:`podnuma.inputs.strict_loader`) are imported by the functions that
# read YAML: a JSON input never loads them.

__all__ = [
    "STDIN",
    "files_read",
    "STDIN_NAME",
    "Document",
    "field_path_under",
    "JSONListStream",
    "input_name",
    "is_stdin",
    "MalformedJSON",
    "check_tree",
    "decode_text",
    "json_input_error",
    "load_json",
    "load_safe_yaml",
    "load_json_streamed",
    "lone_surrogate_message",
    "may_hold_surrogates",
    "open_input",
    "parse_document",
    "parse_documents",
    "parse_first_document",
    "read_bytes",
    "read_failure",
    "read_text",
    "refuse_lone_surrogates",
    "unnamed_pipe",
    "wait_for_writer",
    "yaml_input_error",
]

#: the file argument that means standard input (kubectl's habit)
STDIN = "-"
#: how standard input is named in messages
STDIN_NAME = "<stdin>"


def is_stdin(path: str | Path) -> bool:
    """Whether a file argument means standard input."""
    return str(path) == STDIN


def input_name(path: str | Path) -> str:
    """The name messages use for a file argument."""
    return STDIN_NAME if is_stdin(path) else str(path)


#: bytes asked for per read when the size is not known: a byte limit of
#: gigabytes must not allocate gigabytes before anything is read
_CHUNK = 1 << 20


class PastLimit(Exception):
    """An input has more bytes than its limit (what was read of it already
    let go: a link to ``/dev/zero`` costs the limit in memory, not twice)."""


def _read_upto(read: Callable[[int], bytes], limit: int, *, first: int = _CHUNK) -> bytes:
    """At most ``limit`` bytes from ``read``, in chunks, so that the buffer
    grows with the input rather than with the limit; :class:`PastLimit`
    when there are more (one byte past the limit is read to tell)."""
    chunks: list[bytes] = []
    total = 0
    want = first
    while total <= limit:
        chunk = read(min(want, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = _CHUNK
    if total > limit:
        chunks.clear()  # (before the caller builds its message: never the input twice in memory)
        raise PastLimit
    return b"".join(chunks)


def _read_stdin(what: str, limit: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    try:
        data = (
            _read_upto(stream.read, limit) if stream is not None
            else sys.stdin.read(limit + 1).encode("utf-8")
        )
        if len(data) > limit:
            raise PastLimit
    except OSError as e:
        raise InputError(f"cannot read {what} from standard input: {e.strerror or e}",
                         file=STDIN_NAME) from None
    except (ValueError, AttributeError):  # closed or missing stdin
        raise InputError(f"cannot read {what} from standard input: it is closed",
                         file=STDIN_NAME) from None
    return bytes(data)


#: malformed YAML up to this size is parsed again by the pure-Python parser
#: for its (more precise) message
_REPARSE_FOR_MESSAGE = 1 << 20


#: (a pattern, compiled by ``re`` when first used: only an error's position needs it)
_SEGMENT = r"\[(\d+)\]"


class Document:
    """A loaded document: its data, its name (for messages) and, when
    available, its YAML node tree (for line numbers)."""

    name: str
    data: Any
    root: yaml.Node | None
    # JSON text whose node tree is composed only when a position is needed
    # (composing a large file costs far more than parsing it)
    source: str | None

    def __init__(
        self,
        name: str,
        data: Any,
        root: yaml.Node | None,
        source: str | None = None,
    ) -> None:
        self.name = name
        self.data = data
        self.root = root
        self.source = source

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(name={self.name!r}, data={self.data!r}, root={self.root!r}, source={self.source!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Document) or other.__class__ is not self.__class__:
            return False
        return (self.name, self.data, self.root, self.source) == (other.name, other.data, other.root, other.source)

    def locate(self, path: str, key: bool = False) -> tuple[int, int] | None:
        """1-based (line, column) of the field at ``path``, or of the
        deepest enclosing field found; ``None`` when unknown. A scalar
        field's position is its value's, unless ``key`` (an error about the
        key itself: an unknown field) asks for the key's."""
        if self.root is None and self.source is not None:
            # a JSON text: read off the text in one pass (no node tree)
            from podnuma.golang.jsonsyntax import json_locate

            return json_locate(self.source, path, key)
        node = self.root
        if node is None:
            return None
        import yaml

        best: yaml.Mark | None = None  # the document itself is not a position
        rest = path
        while rest:
            if rest.startswith("."):
                rest = rest[1:]
                continue
            m = re.match(_SEGMENT, rest)
            if rest.startswith("[") and isinstance(node, yaml.MappingNode):
                # a map's key as the field kit writes it: limits[cpu]
                end = rest.find("]")
                if end < 0:
                    break
                wanted = rest[1:end]
                pair = next(((k, v) for k, v in node.value if _key_text(k) == wanted), None)
                if pair is None:
                    break
                node = pair[1]
                best = node.start_mark if isinstance(node, yaml.ScalarNode) else pair[0].start_mark
                rest = rest[end + 1:]
                continue
            if m:
                if not isinstance(node, yaml.SequenceNode):
                    break
                i = int(m.group(1))
                if i >= len(node.value):
                    break
                node = node.value[i]
                best = node.start_mark
                rest = rest[m.end():]
                continue
            if not isinstance(node, yaml.MappingNode):
                break
            # Keys may contain dots (example.com/gpu): take the longest key
            # that is followed by a separator or the end of the path.
            found: tuple[yaml.Node, yaml.Node] | None = None
            found_len = -1
            for key_node, value_node in node.value:
                text = _key_text(key_node)
                if rest.startswith(text) and len(text) > found_len and (
                    len(rest) == len(text) or rest[len(text)] in ".["
                ):
                    found, found_len = (key_node, value_node), len(text)
            if found is None:
                break
            key_node, node = found
            rest = rest[found_len:]
            # A scalar field points at its value; a block, or the key an
            # error is about (the last one, with ``key``), at its key.
            best = (
                node.start_mark if isinstance(node, yaml.ScalarNode) and not (key and not rest)
                else key_node.start_mark
            )
        return None if best is None else (best.line + 1, best.column + 1)

    def enrich(self, err: InputError, under: str = "") -> InputError:
        """``err`` with this document's name and the field's line appended,
        when the error is about this document; ``under``: where in the
        document the object ``err``'s path starts from (``items[3]``)."""
        if err.file not in (None, self.name):
            return err
        message = err.message
        about_key = message.startswith("unknown field ")
        pos = self.locate(field_path_under(under, err.path), key=about_key) if err.path else None
        if pos is not None and "(line " not in message:
            message = f"{message} (line {pos[0]}, column {pos[1]})"
        return InputError(message, path=err.path, file=self.name)


def field_path_under(parent: str, path: str) -> str:
    """The field path ``path`` of an object that is at ``parent`` in its
    document (``items[3]`` + ``spec.x`` -> ``items[3].spec.x``)."""
    if not parent or not path:
        return parent or path
    return f"{parent}{path}" if path.startswith("[") else f"{parent}.{path}"


def _key_text(node: yaml.Node) -> str:
    """A key node as the data's key (``y`` reads as ``true``)."""
    from podnuma.inputs.goyaml import json_key

    try:
        return json_key(node)
    except InputError:
        return str(getattr(node, "value", ""))


#: a JSON escape that may stand for a lone surrogate (``\\ud800``..``\\udfff``;
#: a pair's two escapes too): only a text holding one is searched for them
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def may_hold_surrogates(text: str | bytes) -> bool:
    """Whether the JSON ``text`` may decode to a string holding a lone
    surrogate (it has a ``\\uD800``..``\\uDFFF`` escape): the text itself
    holds none (:func:`read_text` decodes UTF-8, a request's body too)."""
    if isinstance(text, str):
        return "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None
    return b"\\u" in text and _SURROGATE_ESCAPE_BYTES.search(text) is not None


def refuse_lone_surrogates(data: Any, text: str | bytes, *, name: str) -> None:
    """For a reader that decodes JSON ``text`` to ``data`` by itself (not
    through :func:`load_json`, whose :func:`check_tree` refuses them): the
    refusal of a string of ``data`` holding a lone surrogate, with its
    field path (searched only when ``text`` has an escape that may be one)."""
    if may_hold_surrogates(text):
        err = _surrogate_error(data, name)
        if err is not None:
            raise err


def _surrogate_error(data: Any, name: str) -> InputError | None:
    """The refusal of the first string of the tree ``data`` holding a lone
    surrogate (a mapping's keys before its values: the path to it holds
    none), with its field path (a key's: its mapping's); ``None`` when
    there is none. Run only once a string is known to hold one."""
    todo: list[tuple[Any, str]] = [(data, "")]
    while todo:
        value, path = todo.pop()
        if isinstance(value, str):
            message = lone_surrogate_message(value)
            if message is not None:
                return InputError(message, path=path, file=name)
        elif isinstance(value, dict):
            for k in value:
                message = lone_surrogate_message(k, key=True) if isinstance(k, str) else None
                if message is not None:
                    return InputError(message, path=path, file=name)
            todo.extend(
                (v, f"{path}.{k}" if path else str(k)) for k, v in reversed(list(value.items()))
            )
        elif isinstance(value, list):
            todo.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(value))))
    return None


def _compose(
    text: str, name: str, limits: ReadLimits, *, first_end: list[int] | None = None
) -> list[yaml.Node | None]:
    """The node tree of every document of ``text``; given ``first_end``,
    of its first document only (nothing after the token that ends it is
    parsed), that token's character index appended to ``first_end``."""
    lone = _LONE_SURROGATE.search(text)
    if lone is not None:  # text from a JSON body's "\udc80" escape: no UTF-8 for it
        raise InputError(f"not Unicode text: a lone surrogate at character {lone.start()}", file=name)
    import yaml

    from podnuma.inputs.goyaml import compose_documents, events, first_document

    def stream(c_parser: bool) -> Iterator[Any]:
        got = events(text, c_parser=c_parser)
        return got if first_end is None else first_document(got, first_end)

    have_libyaml = bool(getattr(yaml, "__with_libyaml__", False))
    try:
        try:
            return compose_documents(stream(have_libyaml), limits)
        except yaml.YAMLError as e:
            if not have_libyaml or len(text) > _REPARSE_FOR_MESSAGE:
                raise yaml_input_error(e, name) from None
        # libyaml refused it: the pure-Python parser words the problem
        try:
            return compose_documents(stream(False), limits)
        except yaml.YAMLError as e:
            raise yaml_input_error(e, name) from None
    except RecursionError:
        raise InputError(f"nested more than {limits.max_depth} levels deep", file=name) from None
    except InputError as e:
        raise e.in_file(name) from None


def _check_size(text: str | bytes, name: str, limits: ReadLimits) -> None:
    # text already read through read_bytes is within the limit; this catches
    # text from elsewhere (a request field, a string built by a caller)
    if len(text) > limits.max_bytes:
        raise InputError(f"larger than the limit of {limits.max_bytes} bytes", file=name)


def parse_documents(
    text: str, *, name: str, limits: ReadLimits = DEFAULT_LIMITS
) -> list[Document]:
    """Every document of a YAML stream (a JSON text is one document), each
    with its node tree; within ``limits``. Malformed input raises
    :class:`InputError` naming ``name`` with the line and column of the
    problem."""
    from podnuma.inputs.goyaml import construct

    _check_size(text, name, limits)
    out: list[Document] = []
    for root in _compose(text, name, limits):
        try:
            data = construct(root)
        except InputError as e:
            raise e.in_file(name) from None
        out.append(Document(name, data, root))
    return out


#: a character go-yaml v2's reader refuses (see :func:`_go_yaml_printable`)
_GO_YAML_UNPRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
#: the bytes go-yaml v2's reader takes from its input at a time, less the
#: bytes of an incomplete character carried over from the read before
_GO_YAML_CHUNK = 512


def _go_yaml_printable(value: int) -> bool:
    """A character go-yaml v2's reader takes (else "control characters are
    not allowed": the printable set of the YAML 1.1 spec)."""
    return (value in (0x09, 0x0A, 0x0D, 0x85) or 0x20 <= value <= 0x7E or 0xA0 <= value <= 0xD7FF
            or 0xE000 <= value <= 0xFFFD or 0x10000 <= value <= 0x10FFFF)


class _GoYAMLRead:
    """go-yaml v2's reader (``readerc.go``, ``yaml_parser_update_buffer``)
    over the bytes of a file: the encoding from a byte order mark (UTF-16LE,
    UTF-16BE, UTF-8, none: UTF-8); each read takes 512 bytes less those of
    an incomplete character carried over from the read before, and every
    character of what was read is decoded and checked, the first problem
    ending the reading.

    Decoded here in full, whatever the problems (a byte the reader would
    refuse stands as a space, so that the text can be parsed): ``text``;
    ``reads``, the byte offset where each read ends and the number of
    characters decoded by then; ``problem``, the first problem met: (the
    read it is met in, its character index, go-yaml's words).

    The characters of a read are decoded by Python's codec as far as it
    goes (what it decodes strictly, go-yaml decodes alike: the same
    characters, the same widths); from a byte it refuses, or a character
    cut by the read's end, one character at a time as go-yaml does
    (:meth:`_char`), then the codec again. A file without problems costs a
    codec call per read, not a Python step per character."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.reads: list[tuple[int, int]] = []
        self.problem: tuple[int, int, str] | None = None
        if data.startswith(b"\xff\xfe"):
            encoding, pos = "le", 2
        elif data.startswith(b"\xfe\xff"):
            encoding, pos = "be", 2
        elif data.startswith(b"\xef\xbb\xbf"):
            encoding, pos = "utf8", 3
        else:
            encoding, pos = "utf8", 0
        codec = {"le": "utf-16-le", "be": "utf-16-be", "utf8": "utf-8"}[encoding]
        parts: list[str] = []
        count = 0  # characters decoded so far
        size = len(data)
        read_end = 0
        while True:
            eof = read_end == size
            if not eof:
                read_end += min(_GO_YAML_CHUNK - max(0, read_end - pos), size - read_end)
            while pos < read_end:
                chunk = data[pos:read_end]
                if self.problem is not None:
                    # past the first problem go-yaml reads nothing (it stops
                    # there): the rest is text only for finding where the
                    # first document ends, which then lies past the problem
                    # whatever its characters are (one codec call a read,
                    # however many bytes it refuses)
                    part = _GO_YAML_UNPRINTABLE.sub(" ", chunk.decode(codec, _spaces_for_errors()))
                    parts.append(part)
                    count += len(part)
                    pos = read_end
                    break
                try:
                    part, stop = chunk.decode(codec), len(chunk)
                except UnicodeDecodeError as e:
                    part, stop = chunk[:e.start].decode(codec), e.start
                if part:
                    count = self._take(part, parts, count)
                    pos += stop
                if pos == read_end:
                    break
                # a byte the codec refuses, or a character the read cut
                value, width, problem = self._char(pos, read_end, eof, encoding)
                if width == 0:
                    break  # incomplete: carried over to the next read
                if problem is None:
                    count = self._take(chr(value), parts, count)
                else:
                    if self.problem is None:
                        self.problem = (len(self.reads), count, problem)
                    parts.append(" ")
                    count += 1
                pos += width
            self.reads.append((read_end, count))
            if eof:
                break
        self.text = "".join(parts)

    def _take(self, part: str, parts: list[str], count: int) -> int:
        """Add the decoded characters ``part`` (the ``count``-th character
        first), those go-yaml refuses as spaces; the count after them."""
        bad = _GO_YAML_UNPRINTABLE.search(part)
        if bad is not None:
            if self.problem is None:
                self.problem = (len(self.reads), count + bad.start(),
                                f"control characters are not allowed: #x{ord(bad.group()):04x}")
            part = _GO_YAML_UNPRINTABLE.sub(" ", part)
        parts.append(part)
        return count + len(part)

    def _char(self, pos: int, read_end: int, eof: bool, encoding: str) -> tuple[int, int, str | None]:
        """The character at ``pos``: (its value, its width, a problem);
        width 0: incomplete, more to read."""
        data, avail = self.data, read_end - pos
        if encoding == "utf8":
            octet = data[pos]
            width = 1 if octet < 0x80 else 2 if octet & 0xE0 == 0xC0 else 3 if octet & 0xF0 == 0xE0 \
                else 4 if octet & 0xF8 == 0xF0 else 0
            if width == 0:
                return 0, 1, "invalid leading UTF-8 octet"
            if width > avail:
                return (0, avail, "incomplete UTF-8 octet sequence") if eof else (0, 0, None)
            value = octet & (0x7F, 0x1F, 0x0F, 0x07)[width - 1]
            for k in range(1, width):
                trail = data[pos + k]
                if trail & 0xC0 != 0x80:
                    return 0, k, "invalid trailing UTF-8 octet"
                value = (value << 6) + (trail & 0x3F)
            if width > 1 and value < (0, 0x80, 0x800, 0x10000)[width - 1]:
                return 0, width, "invalid length of a UTF-8 sequence"
            if 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
                return 0, width, "invalid Unicode character"
            return value, width, None
        order: Literal["little", "big"] = "little" if encoding == "le" else "big"
        if avail < 2:
            return (0, avail, "incomplete UTF-16 character") if eof else (0, 0, None)
        value = int.from_bytes(data[pos:pos + 2], order)
        if value & 0xFC00 == 0xDC00:
            return 0, 2, "unexpected low surrogate area"
        if value & 0xFC00 != 0xD800:
            return value, 2, None
        if avail < 4:
            return (0, avail, "incomplete UTF-16 surrogate pair") if eof else (0, 0, None)
        low = int.from_bytes(data[pos + 2:pos + 4], order)
        if low & 0xFC00 != 0xDC00:
            return 0, 2, "expected low surrogate area"
        return 0x10000 + ((value & 0x3FF) << 10) + (low & 0x3FF), 4, None

    def refused(self, needed: int) -> tuple[int, str] | None:
        """The problem go-yaml meets when its parser needs the first
        ``needed`` characters: (its character index, its words), or
        ``None``. The reader reads until it has decoded that many (or the
        input ends), and every read is decoded whole."""
        if self.problem is None:
            return None
        last = next((i for i, (_, count) in enumerate(self.reads) if count >= needed), len(self.reads) - 1)
        read, at, words = self.problem
        return (at, words) if read <= last else None


def _spaces_for_errors() -> str:
    """The name of a codec error handler that puts a space for what the
    codec refuses (as the reader puts one for a problem), registered once."""
    import codecs

    name = "podnuma-yaml-space"
    try:
        codecs.lookup_error(name)
    except LookupError:
        def space(e: UnicodeError) -> tuple[str, int]:
            assert isinstance(e, UnicodeDecodeError)
            return " ", e.end

        codecs.register_error(name, space)
    return name


def _go_yaml_needed(text: str) -> int:
    """How many characters of ``text`` go-yaml v2's parser has asked its
    reader for when it has the first document (or has failed in it): the
    scanner looks at most four characters past the start of the token that
    ends the document (or of its problem)."""
    import yaml

    from podnuma.inputs.goyaml import events, first_document

    end: list[int] = []
    try:
        for _ in first_document(events(text, c_parser=False), end):
            pass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        end.append(len(text) if mark is None else mark.index)
    except yaml.YAMLError:
        end.append(len(text))
    return min(len(text), (end[0] if end and end[0] >= 0 else len(text)) + 4)


def parse_first_document(
    text: str | bytes, *, name: str, limits: ReadLimits = DEFAULT_LIMITS, duplicates: list[str] | None = None,
    prepare: Callable[[yaml.Node], None] | None = None,
) -> Document:
    """The first document of a YAML stream (a file's bytes, or text as
    UTF-8), read as ``sigs.k8s.io/yaml`` reads YAML (go-yaml v2's
    ``Unmarshal``): parsing stops at the token that ends the first document
    (``---``, ``...``, the end of the text), so a later document is never
    parsed and may be anything; the reader decodes the bytes (UTF-8, or
    UTF-16 after a byte order mark) a read at a time (:class:`_GoYAMLRead`),
    so a byte it cannot decode or a control character is refused where a
    read took it, and never past the last read. A stream without a
    document gives a document of ``None``. Errors as
    :func:`parse_documents`; ``duplicates``: as
    :func:`~podnuma.inputs.goyaml.construct`'s; ``prepare``: called with
    the document's node tree before its values are built."""
    from podnuma.inputs.goyaml import construct

    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    _check_size(data, name, limits)
    refused = None
    clean = None
    if not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        with contextlib.suppress(UnicodeDecodeError):  # (encoded surrogates too)
            clean = data.decode("utf-8")
    if clean is not None and _GO_YAML_UNPRINTABLE.search(clean) is None:
        text = clean.removeprefix("\ufeff")  # nothing the reader refuses: no need to follow its reads
    else:
        read = _GoYAMLRead(data)
        text = read.text
        if read.problem is not None:  # (where the parser stops matters only then)
            refused = read.refused(_go_yaml_needed(text))
    if refused is not None:
        at, words = refused
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        raise InputError(f"invalid YAML: {words} (line {line}, column {column})", file=name)
    roots = _compose(text, name, limits, first_end=[])
    if not roots:
        return Document(name, None, None)
    if prepare is not None and roots[0] is not None:
        prepare(roots[0])
    try:
        value = construct(roots[0], duplicates)
    except InputError as e:
        raise e.in_file(name) from None
    return Document(name, value, roots[0])


def load_safe_yaml(text: str, *, name: str, limits: ReadLimits = DEFAULT_LIMITS) -> Any:
    """What ``yaml.safe_load(text)`` gives (PyYAML's safe schema: the values
    another library expects of its own settings files), within ``limits``:
    the text is composed once, by the bounded composer (libyaml's parser
    where PyYAML has it; its size, depth, node count and aliases checked),
    and the values are built from that tree as ``safe_load`` builds them
    (its resolver's tags, its constructor). Malformed text, more than one
    document or a value the safe schema refuses is an :class:`InputError`
    naming ``name``."""
    import yaml

    from podnuma.inputs.goyaml import PLAIN, QUOTED, NonSpecificScalar

    _check_size(text, name, limits)
    docs = _compose(text, name, limits)
    if not docs:
        return None
    if len(docs) > 1:
        raise InputError("expected a single document in the stream", file=name)
    root = docs[0]
    if root is None:
        return None
    loader = yaml.SafeLoader("")
    resolve: Any = loader.resolve
    try:
        # the composer leaves a node without a tag of its own with PLAIN (a
        # plain scalar, a collection) or QUOTED (a quoted scalar, the
        # non-specific "!", which PyYAML resolves as a plain scalar): its
        # resolver tags them as safe_load would
        seen: set[int] = set()
        todo: list[yaml.Node] = [root]
        while todo:
            node = todo.pop()
            if id(node) in seen:  # an alias: the anchored node, shared
                continue
            seen.add(id(node))
            if isinstance(node, yaml.ScalarNode):
                if node.tag in (PLAIN, QUOTED):
                    plain = node.tag == PLAIN or isinstance(node, NonSpecificScalar)
                    node.tag = resolve(yaml.ScalarNode, node.value, (plain, True))
                continue
            if node.tag in (PLAIN, QUOTED):
                node.tag = resolve(type(node), None, True)
            if isinstance(node, yaml.MappingNode):
                todo.extend(n for pair in node.value for n in pair)
            else:
                todo.extend(node.value)
        return loader.construct_document(root)
    except yaml.YAMLError as e:
        raise yaml_input_error(e, name) from None
    except (ValueError, TypeError, OverflowError) as e:  # a constructor's own (!!int x)
        raise InputError(f"cannot read a value: {e}", file=name) from None
    finally:
        loader.dispose()


def parse_document(
    text: str, *, name: str, json_only: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> Document:
    """Parse YAML (or JSON when ``json_only`` / the name ends in .json)
    holding at most one document, within ``limits``.

    Malformed input raises :class:`InputError` naming ``name`` with the
    line and column of the problem.
    """
    if json_only or name.lower().endswith(".json"):
        return Document(name, load_json(text, name=name, limits=limits), None, source=text)
    docs = parse_documents(text, name=name, limits=limits)
    if not docs:
        return Document(name, None, None)
    if len(docs) > 1:
        extra = docs[1].root
        where = "" if extra is None else (
            f" (line {extra.start_mark.line + 1}, column {extra.start_mark.column + 1})"
        )
        raise InputError(
            f"invalid YAML: expected a single document, found {len(docs)}{where}", file=name
        )
    return docs[0]


class _JSONDuplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _JSONDuplicate(k)
        out[k] = v
    return out



class _JSONConstant(ValueError):
    pass


def _json_constant(word: str) -> Any:
    raise _JSONConstant(word)


#: a JSON number with a fraction or an exponent: a float, a float that keeps
#: its text, or (past the float range) its text, so that a quantity field
#: parses the number's text as ``Quantity.UnmarshalJSON`` does
#: (:mod:`podnuma.golang.jsonnumbers`; integers are exact as they are)
_json_float = json_float


def load_json(
    text: str | bytes, *, name: str, limits: ReadLimits = DEFAULT_LIMITS, salvage: bool = False,
    pairs: Callable[[list[tuple[str, Any]]], dict[str, Any]] | None = None,
    numbers: Callable[[str], Any] | None = None, integers: Callable[[str], Any] | None = None,
) -> Any:
    """A JSON text as plain values, within ``limits`` (bytes, nesting,
    values); duplicate keys, ``NaN`` and ``Infinity`` refused (a duplicate
    key by a :class:`DuplicateJSONKey` that names its field path, line and
    column). ``pairs``: how an object's key-value pairs become a mapping
    instead (a reader that takes a repeated key as Go's decoder does);
    ``numbers``: what a number with a fraction or an exponent is read as
    instead (given its text); ``integers``: what an integer is read as
    instead (given its text)."""
    if len(text) > limits.max_bytes:
        raise InputError(f"larger than the limit of {limits.max_bytes} bytes", file=name)
    try:
        data = json.loads(text, object_pairs_hook=pairs or _json_pairs, parse_constant=_json_constant,
                          parse_float=numbers or _json_float, parse_int=integers)
    except json.JSONDecodeError as e:
        raise json_input_error(e, name) from None
    except _JSONDuplicate as e:
        raise DuplicateJSONKey.of(text, e.key, file=name) from None
    except _JSONConstant as e:
        raise InputError(f"invalid JSON: {e} is not a JSON value", file=name) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", file=name) from None
    except RecursionError:
        raise InputError(f"nested more than {limits.max_depth} levels deep", file=name) from None
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise InputError(f"invalid JSON: a number of more than {_max_digits()} digits", file=name) from None
    check_tree(data, name=name, limits=limits, strings=may_hold_surrogates(text))
    return data


def _max_digits() -> int:
    import sys

    return sys.get_int_max_str_digits()


def check_tree(
    data: Any, *, name: str, limits: ReadLimits = DEFAULT_LIMITS, strings: bool = True
) -> None:
    """Refuse a tree of plain values deeper than ``limits.max_depth`` or
    with more than ``limits.max_nodes`` values (JSON has no aliases: the
    byte limit already bounds the values, this bounds the nesting), or
    holding a string (a key or a value) with a lone surrogate (a JSON
    ``"\\ud800"`` escape: :func:`lone_surrogate_message`, with its field
    path). ``strings=False``: the strings are known to hold none (the text
    they were decoded from has no such escape: :func:`may_hold_surrogates`)."""
    _count_values(data, 0, 0, name=name, limits=limits, strings=strings)


#: a value's type -> 1: a mapping, 2: a list, 0: neither (subclasses too:
#: the JSON readers that keep duplicate keys build a subclass of dict)
_CONTAINER_KINDS: dict[type, int] = {dict: 1, list: 2, str: 0, int: 0, float: 0, bool: 0, type(None): 0}


def _container_kind(t: type) -> int:
    kind = _CONTAINER_KINDS.get(t)
    if kind is None:
        kind = _CONTAINER_KINDS[t] = 1 if issubclass(t, dict) else 2 if issubclass(t, list) else 0
    return kind


def _count_values(
    data: Any, depth: int, nodes: int, *, name: str, limits: ReadLimits, strings: bool = True
) -> int:
    """``nodes`` plus the values of ``data``, a value nested ``depth``
    containers deep; :func:`check_tree`'s refusals (a lone surrogate in a
    string only with ``strings``: its field path is then that of the
    string in ``data``)."""
    max_depth = limits.max_depth
    kinds = _CONTAINER_KINDS
    todo: list[tuple[Any, int]] = [(data, depth)]
    while todo:
        value, depth = todo.pop()
        nodes += 1
        kind = kinds.get(type(value))
        if kind is None:
            kind = _container_kind(type(value))
        if kind == 1:
            children: Any = value.values()
            if strings:
                for k in value:
                    if type(k) is str and not k.isascii() and _LONE_SURROGATE.search(k):
                        raise _surrogate_error(data, name) or InputError("a lone surrogate", file=name)
        elif kind == 2:
            children = value
        else:
            if strings and type(value) is str and not value.isascii() and _LONE_SURROGATE.search(value):
                raise _surrogate_error(data, name) or InputError("a lone surrogate", file=name)
            continue
        depth += 1
        if depth > max_depth:
            raise InputError(f"nested more than {max_depth} levels deep", file=name)
        for child in children:
            kind = kinds.get(type(child))
            if kind is None:
                kind = _container_kind(type(child))
            if kind:
                todo.append((child, depth))
            else:
                nodes += 1
                if (strings and type(child) is str and not child.isascii()
                        and _LONE_SURROGATE.search(child)):
                    raise _surrogate_error(data, name) or InputError("a lone surrogate", file=name)
        if nodes > limits.max_nodes:
            raise InputError(f"more than {limits.max_nodes} values", file=name)
    return nodes


class _NotStreamed(Exception):
    """The streaming scan stops: :func:`load_json` reads the text instead."""


_JSON_DECODER = json.JSONDecoder(
    object_pairs_hook=_json_pairs, parse_constant=_json_constant, parse_float=_json_float
)
_PLAIN_DECODER = json.JSONDecoder(parse_float=_json_float)
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class JSONListStream:
    """A JSON object whose list under one key is read one item at a time:
    ``top`` is the object without that key; :meth:`items` decodes the
    list's items again, one by one, from the ``text`` already checked."""

    text: str
    top: dict[str, Any]
    starts: list[int]

    def __init__(self, text: str, top: dict[str, Any], starts: list[int]) -> None:
        self.text = text
        self.top = top
        self.starts = starts

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(text={self.text!r}, top={self.top!r}, starts={self.starts!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, JSONListStream) or other.__class__ is not self.__class__:
            return False
        return (self.text, self.top, self.starts) == (other.text, other.top, other.starts)

    def __hash__(self) -> int:
        return hash((self.text, self.top, self.starts))

    def __len__(self) -> int:
        return len(self.starts)

    def items(self) -> Iterator[Any]:
        # the text was checked with the strict decoder (duplicate keys,
        # NaN and Infinity refused): the standard one gives the same values
        # without calling back into Python for every object
        decode, text = _PLAIN_DECODER.raw_decode, self.text
        for start in self.starts:
            yield decode(text, start)[0]


def load_json_streamed(
    text: str, *, name: str, key: str, limits: ReadLimits = DEFAULT_LIMITS
) -> JSONListStream | Any:
    """A JSON object whose list under ``key`` is read one item at a time
    (a :class:`JSONListStream`), within the same ``limits``, refusals and
    wording as :func:`load_json`: the text is checked whole first (every
    item decoded, counted and dropped), so a refusal comes before any item
    is handed out. Any other text (not an object, ``key`` missing or not a
    list, anything malformed or over a limit) is read by :func:`load_json`,
    which returns its values or raises its error."""
    if len(text) > limits.max_bytes:
        raise InputError(f"larger than the limit of {limits.max_bytes} bytes", file=name)
    try:
        top, starts = _scan_object(text, key, name=name, limits=limits,
                                   strings=may_hold_surrogates(text))
    except (_NotStreamed, InputError, ValueError, RecursionError, IndexError):
        return load_json(text, name=name, limits=limits)
    return JSONListStream(text, top, starts)


def _scan_object(
    text: str, key: str, *, name: str, limits: ReadLimits, strings: bool = True
) -> tuple[dict[str, Any], list[int]]:
    space, decode = _JSON_SPACE.match, _JSON_DECODER.raw_decode
    i = space(text, 0).end()  # type: ignore[union-attr]
    if text[i] != "{":
        raise _NotStreamed
    i = space(text, i + 1).end()  # type: ignore[union-attr]
    pairs: list[tuple[str, Any]] = []
    starts: list[int] | None = None
    nodes = 1  # the object
    while text[i] != "}" or pairs:
        if text[i] != '"':
            raise _NotStreamed
        k, i = _scanstring(text, i + 1)
        if strings and lone_surrogate_message(k, key=True) is not None:
            raise _NotStreamed  # (load_json words it, with its path)
        i = space(text, i).end()  # type: ignore[union-attr]
        if text[i] != ":":
            raise _NotStreamed
        i = space(text, i + 1).end()  # type: ignore[union-attr]
        if k == key and text[i] == "[" and starts is None:
            starts, i, nodes = _scan_list(text, i, nodes, name=name, limits=limits, strings=strings)
            pairs.append((k, None))
        else:
            value, i = decode(text, i)
            nodes = _count_values(value, 1, nodes, name=name, limits=limits, strings=strings)
            pairs.append((k, value))
        more, i = _next_item(text, i, "}")
        if not more:
            break
    if starts is None or space(text, i + 1).end() != len(text):  # type: ignore[union-attr]
        raise _NotStreamed
    top = _json_pairs(pairs)
    del top[key]
    return top, starts


def _scan_list(
    text: str, i: int, nodes: int, *, name: str, limits: ReadLimits, strings: bool = True
) -> tuple[list[int], int, int]:
    """The start of each item of the list at ``text[i]`` (each decoded and
    counted), the index past the list, and the values counted so far."""
    space, decode = _JSON_SPACE.match, _JSON_DECODER.raw_decode
    nodes += 1
    if limits.max_depth < 2:
        raise _NotStreamed
    starts: list[int] = []
    i = space(text, i + 1).end()  # type: ignore[union-attr]
    if text[i] == "]":
        return starts, i + 1, nodes
    while True:
        starts.append(i)
        value, i = decode(text, i)
        nodes = _count_values(value, 2, nodes, name=name, limits=limits, strings=strings)
        more, i = _next_item(text, i, "]")
        if not more:
            return starts, i + 1, nodes


def _next_item(text: str, i: int, close: str) -> tuple[bool, int]:
    """Past an item of an object or list, at ``text[i]``: ``(True, the next
    item's start)`` after a comma, ``(False, the index of close)`` at the
    closing bracket ``close``; anything else is not streamed."""
    space = _JSON_SPACE.match
    i = space(text, i).end()  # type: ignore[union-attr]
    if text[i] == ",":
        return True, space(text, i + 1).end()  # type: ignore[union-attr]
    if text[i] != close:
        raise _NotStreamed
    return False, i


class MalformedJSON(InputError):
    """JSON that does not parse (as opposed to JSON over a limit)."""


class DuplicateJSONKey(InputError):
    """JSON whose object repeats a key: refused here; a reader that must
    decode as Go's encoding/json does (the last duplicate wins) catches it.

    Made by :meth:`of`, it says where: the repeated key's field path and
    its line and column (``PATH: invalid JSON: duplicate key 'k' (line L,
    column C)``, as a YAML file's duplicate key is told), found by scanning
    the text again when its ``message`` or ``path`` is first read: a
    reader that catches it and decodes the text its own way pays nothing
    for them (a fleet dump of hundreds of MB)."""

    #: (the text, the key) while the position is not yet looked for
    _pending: tuple[str | bytes, str] | None = None
    _message: str
    _path: str

    @classmethod
    def of(cls, text: str | bytes, key: str, *, file: str | None) -> DuplicateJSONKey:
        """The refusal of JSON ``text``, which :func:`json.loads` with
        :func:`_json_pairs` refused for repeating ``key``."""
        err = cls(f"invalid JSON: duplicate key {key!r}", file=file)
        err._pending = (text, key)
        return err

    def _locate(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        text, key = pending
        found = _duplicate_where(text, key)
        if found is not None:
            self._path, line, column = found
            self._message = f"{self._message} (line {line}, column {column})"
            self.args = (self._message,)

    @property
    def message(self) -> str:  # type: ignore[override]
        if self._pending is not None:
            self._locate()
        return self._message

    @message.setter
    def message(self, value: str) -> None:  # (a message set is the message: no position added later)
        if self._pending is not None:
            self._locate()
        self._message = value

    @property
    def path(self) -> str:  # type: ignore[override]
        if self._pending is not None:
            self._locate()
        return self._path

    @path.setter
    def path(self, value: str) -> None:  # (a path set is the path: not the one found later)
        if self._pending is not None:
            self._locate()
        self._path = value

    def __reduce__(self) -> tuple[Any, ...]:
        # (located first: the text is not sent along)
        return (type(self), (self.message,), {"_message": self.message, "_path": self.path, "file": self.file})


#: what YAML counts as a line break (PyYAML's reader, libyaml's): the line
#: and column of a duplicate key are those a YAML file's would have
_LINE_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


def _line_column(text: str, pos: int) -> tuple[int, int]:
    """1-based (line, column) of ``text[pos]``, in characters, lines
    broken as YAML breaks them (``\\r\\n`` one break)."""
    breaks = sum(text.count(c, 0, pos) for c in _LINE_BREAKS) - text.count("\r\n", 0, pos)
    start = max(text.rfind(c, 0, pos) for c in _LINE_BREAKS) + 1
    return breaks + 1, pos - start + 1


#: the characters a pass over JSON text stops at (the rest, between two of
#: them: white space, numbers, literals, commas and colons)
_JSON_STOPS = re.compile(r'["{}\[\]]')


def _duplicate_where(text: str | bytes, key: str) -> tuple[str, int, int] | None:
    """The field path, line and column of the repeated ``key`` that
    :func:`json.loads` (with :func:`_json_pairs`) refuses ``text`` for;
    ``None`` when it is not found. The object refused is the first to END
    that repeats a key (the hook runs as each object ends), the key named
    the first of its keys that repeats an earlier one (keys compared
    decoded: ``"a\\u0062"`` is ``"ab"``), its position that of the repeat.

    One pass over the text, as long as the text whatever its nesting (a
    hostile body of 1 MB nested 900 deep is refused in about the time it
    takes to read it): the pass stops only at quotes and brackets (a
    regular expression finds the next); a run between two of them is
    skipped whole, its commas counted (an array's index; in an object, the
    next string a key); each key decoded by :mod:`json`'s own string
    scanner; the open containers kept on a list, not on the call stack."""
    if not isinstance(text, str):
        text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")  # (as json.loads)
    stop = _JSON_STOPS.search
    scan = _scanstring
    # each open container: [is an object, its part of the path, the index
    # of the item (array) or the key last read (object), the keys seen,
    # whether the next string is a key, (position, key) of its first repeat]
    frames: list[list[Any]] = []
    pos = 0
    try:
        while True:
            m = stop(text, pos)
            if m is None:
                return None
            at = m.start()
            top = frames[-1] if frames else None
            if top is not None and at > pos:
                commas = text.count(",", pos, at)
                if commas:
                    if top[0]:
                        top[4] = True
                    else:
                        top[2] += commas
            c = text[at]
            if c == '"':
                k, pos = scan(text, at + 1)
                if top is not None and top[0] and top[4]:
                    if top[5] is None and k in top[3]:
                        top[5] = (at, k)
                    top[3].add(k)
                    top[2] = k
                    top[4] = False
                continue
            pos = at + 1
            if c in "{[":
                part = None if top is None else (top[2] if top[0] else f"[{top[2]}]")
                frames.append([c == "{", part, 0 if c == "[" else None, set(), True, None])
                continue
            done = frames.pop()
            if done[0] and done[5] is not None:
                where, k = done[5]
                if k != key:
                    return None
                path = ""
                for part in [*(f[1] for f in frames), done[1], k]:
                    if part is None:
                        continue
                    path = path + part if part.startswith("[") or not path else f"{path}.{part}"
                return (path, *_line_column(text, where))
    except (ValueError, IndexError, LookupError):
        return None


def json_input_error(e: json.JSONDecodeError, name: str) -> InputError:
    """The ``InputError`` for malformed JSON in file ``name``."""
    return MalformedJSON(f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", file=name)


def yaml_input_error(e: yaml.YAMLError, name: str) -> InputError:
    """The ``InputError`` for malformed YAML in file ``name``, with the line
    and column of the problem when PyYAML knows them."""
    import yaml

    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        problem = e.problem or e.context or "malformed YAML"
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return InputError(f"invalid YAML: {problem}{where}", file=name)
    return InputError(f"invalid YAML: {' '.join(str(e).split())}", file=name)  # one line


def read_bytes(
    path: str | Path, *, what: str, name: str | None = None, limits: ReadLimits = DEFAULT_LIMITS
) -> bytes:
    """A file's bytes, or standard input's when ``path`` is ``-``, at most
    ``limits.max_bytes`` of them; ``InputError`` naming it (``name``,
    default the path) when it cannot be read or is larger."""
    name = input_name(path) if name is None else name
    limit = limits.max_bytes
    try:
        data = (
            _read_stdin(what, limit) if is_stdin(path)
            else _read_path(path, what=what, name=name, limit=limit)
        )
    except PastLimit:
        data = None
    if data is None or len(data) > limit:
        raise InputError(f"{what} file is larger than the limit of {limit} bytes", file=name)
    return data


def read_text(
    path: str | Path, *, what: str, name: str | None = None, limits: ReadLimits = DEFAULT_LIMITS
) -> str:
    """A UTF-8 file, or standard input when ``path`` is ``-``, within the
    byte limit; ``InputError`` naming it (``name``, default the path) when
    it cannot be read."""
    name = input_name(path) if name is None else name
    data = read_bytes(path, what=what, name=name, limits=limits)
    return decode_text(data, what=what, name=name)


def decode_text(data: bytes, *, what: str, name: str) -> str:
    """UTF-8 bytes as text; ``InputError`` naming ``name`` otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{what} file is not UTF-8 text (byte {e.start})", file=name) from None


#: how long a named pipe given as an input may stay without a writer
#: (nobody has opened it to write yet) before the command gives up on it,
#: in seconds
FIFO_WAIT_S = 30.0

#: the device of unnamed pipes (the kernel's pipefs), found once
_PIPEFS: list[int] = []


def unnamed_pipe(st: os.stat_result) -> bool:
    """Whether ``st`` is an unnamed pipe's (a shell's ``|`` or
    ``<(command)``, ``/dev/stdin`` on a pipe): a pipe with no name in any
    directory, whose writer was there when it was made."""
    if not stat.S_ISFIFO(st.st_mode):
        return False
    if not _PIPEFS:
        r, w = os.pipe()
        try:
            _PIPEFS.append(os.fstat(r).st_dev)
        finally:
            os.close(r)
            os.close(w)
    return st.st_dev == _PIPEFS[0]


def wait_for_writer(fh: BinaryIO, *, what: str, name: str) -> bytes:
    """For an input the user named that is a named pipe (``mkfifo``): wait
    until it has a writer, at most :data:`FIFO_WAIT_S` seconds, then
    ``InputError`` naming it (``name``). A writer that opens it a moment
    after the command started is waited for (reading at once would find
    it empty), and one that has it open is read as it comes, however
    slowly (``kubectl get ... > fifo``: the shell opens it at once, the
    bytes come later). Nothing is waited for on a file of another kind, or
    on an unnamed pipe (:func:`unnamed_pipe`: its writer was there from the
    start). Returns the bytes it had to read to tell (at most one: read
    them first)."""
    fd = fh.fileno()
    st = os.fstat(fd)
    if not stat.S_ISFIFO(st.st_mode) or unnamed_pipe(st):
        return b""
    import select

    poller = getattr(select, "poll", None)
    if poller is None:  # (no poll on this system: read as it is)
        return b""
    p = poller()
    p.register(fd, select.POLLIN | select.POLLHUP)
    # Linux reports no hang-up on a named pipe no writer has opened yet:
    # the wait ends with a writer's first bytes or its close
    if p.poll(int(FIFO_WAIT_S * 1000)):
        return b""
    # Nothing to read yet: a writer that holds it open without writing, or
    # none at all. Without waiting, a read tells them apart: "try again"
    # (a writer), the end (none), or a byte just written (a writer).
    os.set_blocking(fd, False)
    try:
        first = os.read(fd, 1)
    except BlockingIOError:
        return b""
    finally:
        os.set_blocking(fd, True)
    if first:
        return first
    raise InputError(f"cannot read {what} file: a named pipe no writer opened within {FIFO_WAIT_S:g} s",
                     file=name)


def _read_path(path: str | Path, *, what: str, name: str, limit: int) -> bytes:
    with open_input(path, what=what, name=name) as fh:
        first = wait_for_writer(fh, what=what, name=name)
        try:
            return first + read_open(fh, limit - len(first))
        except OSError as e:
            raise read_failure(e, what=what, name=name) from None


def read_open(fh: BinaryIO, limit: int) -> bytes:
    """At most ``limit`` bytes of the open file ``fh`` (:class:`PastLimit`
    when it has more), in chunks unless its size is known and within the
    limit; ``OSError`` as reading raises it."""
    size = os.fstat(fh.fileno()).st_size
    if 0 < size <= limit:  # a regular file's size: one read of what is there
        return _read_upto(fh.read, limit, first=size + 1)
    return _read_upto(fh.read, limit)


def read_within(fh: BinaryIO, limit: int, name: str) -> bytes:
    """The bytes of the open file ``fh`` (``name``), at most ``limit`` of
    them: past it ``OSError`` ``EFBIG`` (its ``strerror``: "larger than the
    limit of N bytes"), never more than one byte past it read into memory
    (a device, a pipe or a file growing while read included)."""
    try:
        return read_open(fh, limit)
    except PastLimit:
        raise OSError(errno.EFBIG, f"larger than the limit of {limit} bytes", name) from None


def _open_rb(path: str | Path) -> BinaryIO:
    """The file at ``path`` open for reading bytes, the open never waiting:
    a named pipe with no writer opens at once (a plain ``open`` would wait
    for a writer for ever) and then reads as empty, unless the reader waits
    for a writer, bounded (:func:`wait_for_writer`, for the inputs the user
    names); one with a writer (a shell's ``<(command)``) is read as it
    comes, as standard input is."""
    return open(open_text(path), "rb", opener=_open_nowait)  # noqa: SIM115 (returned open)


def _open_nowait(name: str, flags: int) -> int:
    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(name, flags | nonblock)
    if nonblock:  # (reads wait for a writer's bytes again: no EAGAIN)
        try:
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
    seen = _FILES_READ.get()
    if seen is not None:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            seen.setdefault((st.st_dev, st.st_ino), name)
    return fd


#: the regular files opened for reading within :func:`files_read`
_FILES_READ: ContextVar[dict[tuple[int, int], str] | None] = ContextVar("podnuma_files_read", default=None)


@contextlib.contextmanager
def files_read() -> Iterator[dict[tuple[int, int], str]]:
    """Within the block, every regular file an input reader opens (a file
    the command line names, one a scenario's field names, a checkpoint)
    recorded by its device and inode, with the name it was opened by: a
    command that writes files checks that none of them is one it read."""
    seen: dict[tuple[int, int], str] = {}
    token = _FILES_READ.set(seen)
    try:
        yield seen
    finally:
        _FILES_READ.reset(token)


def read_limited(path: str | Path, limit: int, *, wait: str | None = None) -> bytes:
    """The bytes of the file at ``path``, at most ``limit`` of them
    (:func:`read_within`), for a reader with its own wording of what fails:
    ``OSError`` as opening or reading raises it (``IsADirectoryError`` for
    a directory, ``EFBIG`` past the limit). ``wait``: what the file is, for
    a file the user names, which may be a named pipe whose writer comes a
    moment later (:func:`wait_for_writer`: waited for, bounded;
    ``InputError`` when none came)."""
    with _open_rb(path) as fh:
        if stat.S_ISDIR(os.fstat(fh.fileno()).st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        first = wait_for_writer(fh, what=wait, name=str(path)) if wait is not None else b""
        return first + read_within(fh, limit - len(first), str(path))


def read_regular(path: str | Path, limit: int) -> bytes:
    """:func:`read_limited` of a file that must be a regular one (a
    checkpoint): anything else is ``OSError`` ("not a regular file";
    ``IsADirectoryError`` for a directory) before a byte is read, and the
    descriptor stays non-blocking: a named pipe, with a writer or not,
    cannot hold the reader, nor can a special file of ``/proc`` that waits
    for data (a link to ``/proc/kmsg``: ``EAGAIN``)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(open_text(path), flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        return read_within(fh, limit, str(path))


def open_input(path: str | Path, *, what: str, name: str) -> BinaryIO:
    """The file at ``path`` open for reading bytes; ``InputError`` naming
    it (``name``) as :func:`read_bytes` words it when it cannot be opened
    (read errors later: :func:`read_failure`). ``path`` is opened as
    ``Path(path)`` opens it, but a name ending in ``/`` stays a directory's
    (:func:`~podnuma.inputs.pathtext.open_text`)."""
    try:
        fh = _open_rb(path)
        if stat.S_ISDIR(os.fstat(fh.fileno()).st_mode):
            fh.close()
            raise IsADirectoryError(path)
        return fh
    except FileNotFoundError:
        raise InputError(f"{what} file not found", file=name) from None
    except IsADirectoryError:
        raise InputError(f"{what} file is a directory", file=name) from None
    except OSError as e:
        raise read_failure(e, what=what, name=name) from None


def read_failure(e: OSError, *, what: str, name: str) -> InputError:
    """The ``InputError`` for a file that cannot be read."""
    if isinstance(e, IsADirectoryError):
        return InputError(f"{what} file is a directory", file=name)
    return InputError(f"cannot read {what} file: {e.strerror or e}", file=name)

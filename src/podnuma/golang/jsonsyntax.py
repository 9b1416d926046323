"""Go's ``encoding/json`` syntax check (encoding/json/scanner.go: the
scanner ``Unmarshal`` and ``Valid`` run over the whole input before
decoding): the first ``SyntaxError`` of a text in Go's words, for the
readers that quote Go's JSON errors (static pods, the kubelet's
configuration file). Not compiled (off the admission path)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

from podnuma.golang.strconv import go_quote

__all__ = ["go_json_syntax_error", "json_locate", "json_value_texts", "json_value_texts_every"]


def _quote_byte(b: int) -> str:
    """A byte as Go's JSON scanner quotes it in its errors (``quoteChar``:
    the byte taken as a rune, ``'Ã'`` for 0xC3)."""
    if b == 0x27:
        return "'\\''"
    if b == 0x22:
        return "'\"'"
    return "'" + go_quote(chr(b))[1:-1] + "'"


#: how deep Go's JSON scanner lets objects and arrays nest
_GO_JSON_DEPTH = 10000
_JSON_SPACE = frozenset(b" \t\r\n")
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = frozenset(b'bfnrt\\/"')
#: a string's bytes the scanner only steps over
_STRING_RUN = re.compile(rb'[^"\\\x00-\x1f]+')
#: a literal's letters after its first: (word, the letters still expected)
_LITERALS = {ord("t"): "true", ord("f"): "false", ord("n"): "null"}
# (the states of the scan)
_VALUE, _VALUE_OR_CLOSE, _KEY_OR_CLOSE, _KEY, _STRING, _ESCAPE, _HEX_DIGITS, _MINUS, _INT, _ZERO, \
    _POINT, _FRACTION, _EXP, _EXP_SIGN, _EXP_DIGITS, _LITERAL, _AFTER, _TOP = range(18)
# (what an open object or array waits for)
_IN_KEY, _IN_VALUE, _IN_ARRAY = range(3)


def go_json_syntax_error(text: str | bytes) -> str | None:
    """The ``SyntaxError`` Go's ``encoding/json`` finds in ``text`` (its
    whole-input check before decoding: the first bad byte, quoted, and what
    the scan was looking for; ``unexpected end of JSON input``; ``invalid
    character '{' exceeded max depth``), or ``None`` when the text is JSON.
    At the end the scan is given one more space, so a cut literal or number
    is refused for it (``invalid character ' ' in literal true (expecting
    'e')``). ``text`` may be the bytes themselves (a file's: a byte that
    is no UTF-8 is quoted as it is, ``'ÿ'`` for 0xFF)."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    stack: list[int] = []
    state = _VALUE
    word = ""  # (a literal's letters still expected)
    name = ""  # (that literal)
    hex_left = 0
    i, n = 0, len(data)

    def bad(c: int, what: str) -> str:
        return f"invalid character {_quote_byte(c)} {what}"

    def step(c: int) -> str | None:
        """One byte: the new state in ``state``, or the error."""
        nonlocal state, word, name, hex_left
        while True:
            if state == _AFTER and not stack:  # (the top-level value ended)
                state = _TOP
            if state == _STRING:
                if c == 0x22:
                    state = _AFTER
                elif c == 0x5C:
                    state = _ESCAPE
                elif c < 0x20:
                    return bad(c, "in string literal")
                return None
            if state in (_VALUE, _VALUE_OR_CLOSE, _KEY_OR_CLOSE, _KEY, _AFTER, _TOP) and c in _JSON_SPACE:
                return None
            if state == _VALUE_OR_CLOSE and c == 0x5D or state == _KEY_OR_CLOSE and c == 0x7D:
                if state == _KEY_OR_CLOSE:
                    stack[-1] = _IN_VALUE
                state = _AFTER
                continue
            if state == _VALUE_OR_CLOSE:
                state = _VALUE
            if state == _KEY_OR_CLOSE:
                state = _KEY
            if state == _VALUE:
                if c in (0x7B, 0x5B):
                    stack.append(_IN_KEY if c == 0x7B else _IN_ARRAY)
                    state = _KEY_OR_CLOSE if c == 0x7B else _VALUE_OR_CLOSE
                    return bad(c, "exceeded max depth") if len(stack) > _GO_JSON_DEPTH else None
                if c == 0x22:
                    state = _STRING
                elif c == 0x2D:
                    state = _MINUS
                elif c == 0x30:
                    state = _ZERO
                elif 0x31 <= c <= 0x39:
                    state = _INT
                elif c in _LITERALS:
                    name = _LITERALS[c]
                    word, state = name[1:], _LITERAL
                else:
                    return bad(c, "looking for beginning of value")
                return None
            if state == _KEY:
                if c == 0x22:
                    state = _STRING
                    return None
                return bad(c, "looking for beginning of object key string")
            if state == _ESCAPE:
                if c == 0x75:
                    state, hex_left = _HEX_DIGITS, 4
                elif c in _ESCAPES:
                    state = _STRING
                else:
                    return bad(c, "in string escape code")
                return None
            if state == _HEX_DIGITS:
                if c not in _HEX:
                    return bad(c, "in \\u hexadecimal character escape")
                hex_left -= 1
                if not hex_left:
                    state = _STRING
                return None
            if state == _LITERAL:
                if c != ord(word[0]):
                    return bad(c, f"in literal {name} (expecting {_quote_byte(ord(word[0]))})")
                word = word[1:]
                if not word:
                    state = _AFTER
                return None
            if state == _MINUS:
                if c == 0x30:
                    state = _ZERO
                elif 0x31 <= c <= 0x39:
                    state = _INT
                else:
                    return bad(c, "in numeric literal")
                return None
            if state == _INT:
                if c in _DIGITS:
                    return None
                state = _ZERO
            if state in (_ZERO, _FRACTION):
                if c == 0x2E and state == _ZERO:
                    state = _POINT
                    return None
                if c in (0x65, 0x45):
                    state = _EXP
                    return None
                if state == _FRACTION and c in _DIGITS:
                    return None
                state = _AFTER
                continue
            if state == _POINT:
                if c in _DIGITS:
                    state = _FRACTION
                    return None
                return bad(c, "after decimal point in numeric literal")
            if state == _EXP:
                state = _EXP_SIGN
                if c in (0x2B, 0x2D):
                    return None
            if state == _EXP_SIGN:
                if c in _DIGITS:
                    state = _EXP_DIGITS
                    return None
                return bad(c, "in exponent of numeric literal")
            if state == _EXP_DIGITS:
                if c in _DIGITS:
                    return None
                state = _AFTER
                continue
            if state == _TOP:
                return bad(c, "after top-level value")
            # (_AFTER: a value ended)
            if not stack:
                state = _TOP
                continue
            top = stack[-1]
            if top == _IN_KEY:
                if c == 0x3A:
                    stack[-1], state = _IN_VALUE, _VALUE
                    return None
                return bad(c, "after object key")
            if top == _IN_VALUE:
                if c == 0x2C:
                    stack[-1], state = _IN_KEY, _KEY
                    return None
                if c == 0x7D:
                    stack.pop()
                    return None
                return bad(c, "after object key:value pair")
            if c == 0x2C:
                state = _VALUE
                return None
            if c == 0x5D:
                stack.pop()
                return None
            return bad(c, "after array element")

    while i < n:
        if state == _STRING:
            run = _STRING_RUN.match(data, i)
            if run is not None:
                i = run.end()
                continue
        why = step(data[i])
        if why is not None:
            return why
        i += 1
    if state == _TOP:
        return None
    why = step(0x20)
    if why is not None:
        return why
    return None if state == _TOP else "unexpected end of JSON input"


# --------------------------------------------------------------------------
# Where a value is (a text that is JSON: it was read)

#: inside an object or array: every character up to the next bracket,
#: strings stepped over whole (their brackets are not the structure's)
_UP_TO_BRACKET = re.compile(r'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
#: an array's item (or the part before an object or array in it) up to the
#: comma or bracket after it
_UP_TO_SEPARATOR = re.compile(r'(?:[^"\[\]{},]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
#: ``_RUN`` items that are strings, numbers or literals, each with its comma
_RUN = 1024
_SCALAR_RUN = re.compile(r'(?:[ \t\r\n]*+(?:"(?:[^"\\]++|\\.)*+"|[^"\[\]{}, \t\r\n]++)[ \t\r\n]*+,)'
                         + f"{{{_RUN}}}+", re.DOTALL)
_STRING_TEXT = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_SPACES = re.compile(r"[ \t\r\n]*+")
_SCALAR_TEXT = re.compile(r"[^ \t\r\n,\]}]*+")
_INDEX = re.compile(r"\[(\d+)\]")


def _value_end(text: str, i: int) -> int:
    """Where the JSON value starting at ``text[i]`` ends: a nested object
    or array is crossed bracket to bracket (the characters between matched
    by one regular expression), so a long list costs no Python step per
    item."""
    c = text[i]
    if c == '"':
        m = _STRING_TEXT.match(text, i)
        assert m is not None
        return m.end()
    if c not in "[{":
        return _SCALAR_TEXT.match(text, i).end()  # type: ignore[union-attr]
    depth = 0
    while True:
        c = text[i]  # (IndexError: not JSON)
        if c in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return i + 1
        i = _UP_TO_BRACKET.match(text, i + 1).end()  # type: ignore[union-attr]


def _skip_spaces(text: str, i: int) -> int:
    return _SPACES.match(text, i).end()  # type: ignore[union-attr]


def _members(text: str, i: int) -> Iterator[tuple[str, int, int, int]]:
    """The members of the object at ``text[i]``, in the text's order
    (duplicates included): (key, where the key starts, where its value
    starts and ends)."""
    i = _skip_spaces(text, i + 1)
    if text[i] == "}":
        return
    while True:
        m = _STRING_TEXT.match(text, i)
        if m is None:
            raise ValueError("not a JSON object")
        key = json.loads(m.group())
        start = _skip_spaces(text, _skip_spaces(text, m.end()) + 1)  # (past the colon)
        end = _value_end(text, start)
        yield key, i, start, end
        i = _skip_spaces(text, end)
        if text[i] != ",":
            return
        i = _skip_spaces(text, i + 1)


def _item(text: str, i: int, index: int) -> int | None:
    """Where item ``index`` of the array at ``text[i]`` starts, ``None``
    when it has fewer (one regular expression match an item, up to the
    comma after it)."""
    i = _skip_spaces(text, i + 1)
    if text[i] == "]":
        return None
    while index:
        if index >= _RUN:
            m = _SCALAR_RUN.match(text, i)
            if m is not None:  # (a run of strings and numbers, in one match)
                index -= _RUN
                i = m.end()
                continue
        i = _UP_TO_SEPARATOR.match(text, i).end()  # type: ignore[union-attr]
        c = text[i]
        if c == ",":
            index -= 1
            i += 1
        elif c in "[{":
            i = _value_end(text, i)  # (an item holding an object or array)
        else:
            return None  # (the array's end)
    return _skip_spaces(text, i)


def _step(text: str, i: int, rest: str, longest: bool) -> Iterator[tuple[str, int, int]]:
    """The values one step of the field path ``rest`` leads to from the
    value at ``text[i]``: (the rest of the path, where the step's key
    starts (the item's start for an index), where the value starts).
    ``longest``: only the first member with the longest key the path
    starts with (a key may hold dots, ``example.com/gpu``), as the YAML
    tree's locator picks it; else every member whose key fits, in order."""
    if rest.startswith("[") and text[i] == "{":
        close = rest.find("]")  # (a map's key as the field kit writes it: limits[cpu])
        if close >= 0:
            wanted = rest[1:close]
            for key, at, start, _end in _members(text, i):
                if key == wanted:
                    yield rest[close + 1:], at, start
                    if longest:
                        return
        return
    m = _INDEX.match(rest)
    if m is not None:
        if text[i] == "[":
            item = _item(text, i, int(m.group(1)))
            if item is not None:
                yield rest[m.end():], item, item
        return
    if text[i] != "{":
        return
    found: tuple[str, int, int] | None = None
    for key, at, start, _end in _members(text, i):
        if rest.startswith(key) and (len(rest) == len(key) or rest[len(key)] in ".["):
            if not longest:
                yield rest[len(key):], at, start
            elif found is None or len(key) > len(rest) - len(found[0]):
                found = (rest[len(key):], at, start)
    if found is not None:
        yield found


def _position(text: str, i: int) -> tuple[int, int]:
    """1-based (line, column) of ``text[i]``, counted as the YAML reader
    counts them (a line ends at LF, CR LF, CR, NEL, LS or PS; a column is
    a character)."""
    before = text[:i]
    breaks = "\n\r\x85\u2028\u2029"
    line = sum(before.count(c) for c in breaks) - before.count("\r\n")
    last = max(before.rfind(c) for c in breaks)
    return line + 1, i - last


def json_locate(text: str, path: str, key: bool = False) -> tuple[int, int] | None:
    """1-based (line, column) in the JSON ``text`` of the field at ``path``
    (a field kit path: ``a.b[2].c``, ``limits[cpu]``), or of the deepest
    enclosing field found; ``None`` when not even the first step is. A
    scalar field's position is its value's, an object's or list's its
    key's, as is the key's an error about the key itself asks for
    (``key``: the last step). As ``Document.locate`` finds it in a YAML
    tree of the text, in one pass over the text."""
    try:
        i = _skip_spaces(text, 0)
        best: int | None = None
        rest = path
        while rest:
            if rest.startswith("."):
                rest = rest[1:]
                continue
            map_key = rest.startswith("[") and text[i] == "{"  # (limits[cpu])
            is_index = not map_key and text[i] == "["
            step = next(_step(text, i, rest, True), None)
            if step is None:
                break
            rest, at, i = step
            scalar = text[i] not in "[{"
            if is_index:
                best = i
            elif map_key:
                best = i if scalar else at
            else:
                best = i if scalar and not (key and not rest) else at
        return None if best is None else _position(text, best)
    except (IndexError, ValueError):  # (not JSON after all)
        return None


def json_value_texts(text: str, keys: Sequence[str | int]) -> list[str]:
    """The text of every value the keys (object keys, array indices) lead
    to in the JSON ``text``, as written, in the text's order: each of a key
    given twice, as the decoder meets each; ``[]`` when the text is no
    JSON."""
    out: list[str] = []

    def walk(i: int, depth: int) -> None:
        if depth == len(keys):
            out.append(text[i:_value_end(text, i)])
            return
        want = keys[depth]
        if isinstance(want, int):
            at = _item(text, i, want) if text[i] == "[" else None
            if at is not None:
                walk(at, depth + 1)
        elif text[i] == "{":
            for key, _at, start, _end in _members(text, i):
                if key == want:
                    walk(start, depth + 1)

    try:
        walk(_skip_spaces(text, 0), 0)
    except (IndexError, ValueError):
        return []
    return out


def json_value_texts_every(text: str, pattern: Sequence[str | None]) -> dict[tuple[str | int, ...], list[str]]:
    """The texts :func:`json_value_texts` finds for every key path the
    ``pattern`` stands for, in one walk over the JSON ``text``: a key
    (``str``) steps into that object member, ``None`` into every item of
    an array (the path holding its index) or every member of an object
    (its key). Each path's texts come in the text's order, duplicates
    included, as ``json_value_texts(text, path)`` gives them; ``{}`` when
    the text is no JSON."""
    out: dict[tuple[str | int, ...], list[str]] = {}
    keys: list[str | int] = []

    def walk(i: int, depth: int) -> None:
        if depth == len(pattern):
            out.setdefault(tuple(keys), []).append(text[i:_value_end(text, i)])
            return
        want = pattern[depth]
        c = text[i]
        if want is None and c == "[":
            i = _skip_spaces(text, i + 1)
            index = 0
            while text[i] != "]":
                keys.append(index)
                walk(i, depth + 1)
                keys.pop()
                i = _skip_spaces(text, _value_end(text, i))
                if text[i] != ",":
                    break
                i = _skip_spaces(text, i + 1)
                index += 1
        elif c == "{":
            for key, _at, start, _end in _members(text, i):
                if want is None or key == want:
                    keys.append(key)
                    walk(start, depth + 1)
                    keys.pop()

    try:
        walk(_skip_spaces(text, 0), 0)
    except (IndexError, ValueError):
        return {}
    return out

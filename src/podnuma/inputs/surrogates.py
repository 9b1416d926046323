"""Strings with no UTF-8: a lone surrogate (U+D800..U+DFFF alone), which
a YAML or JSON escape (``"\\ud800"``) or a JSON request body's text can
hold once parsed. The readers (:mod:`podnuma.inputs.documents`,
:mod:`podnuma.inputs.goyaml`) refuse them in these words: no answer could
be written with one."""

from __future__ import annotations

import re

__all__ = ["LONE_SURROGATE", "go_json_escapes", "lone_surrogate_message", "with_pairs_joined"]

#: a surrogate code point: alone in a Python string (a pair is one code point)
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_message(text: str, *, key: bool = False) -> str | None:
    """The refusal of a string (a key, with ``key``) holding a lone
    surrogate (a ``"\\ud800"`` escape of YAML or JSON: no UTF-8 for it, so
    no answer could be written), in the wording of the raw text's
    refusal; ``None`` for a string without one."""
    if text.isascii():
        return None
    what = "a key" if key else "the value"
    joined = with_pairs_joined(text)
    if joined is None:
        return (f"not Unicode text: a lone surrogate (\\u{_first_lone(text):04x}, written as an escape) "
                f"in {what}")
    if joined == text:
        return None
    # Pairs only: what JSON writes for a character past U+FFFF, which YAML
    # does not take (libyaml and Go's YAML refuse a surrogate escape)
    pair = LONE_SURROGATE.search(text)
    assert pair is not None
    i = pair.start()
    char = joined[i]  # (no surrogate before it: the texts agree up to it)
    return (f"a surrogate pair written as two escapes (\\u{ord(text[i]):04x}\\u{ord(text[i + 1]):04x}) "
            f"in {what}: YAML takes no surrogate escape; write the character itself, or "
            f"\\U{ord(char):08x} (JSON text with such pairs is read as JSON from a .json file)")


def with_pairs_joined(text: str) -> str | None:
    """``text`` with each surrogate pair it holds (a high surrogate, then a
    low one: the escapes JSON writes for a character past U+FFFF,
    ``"\\ud83d\\ude00"``, which YAML's escapes give as two code points)
    made the one character it stands for, as a JSON reader makes it; the
    text itself when it holds no surrogate; ``None`` when a lone one
    remains (:func:`lone_surrogate_message` words it)."""
    if LONE_SURROGATE.search(text) is None:
        return text
    # (by hand, not through the UTF-16 codec: a codec module is imported on
    # first use, which the web server's jobs, reading no file, refuse)
    joined = _PAIR.sub(_character, text)
    return None if LONE_SURROGATE.search(joined) else joined


#: a high surrogate followed by a low one
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _character(m: re.Match[str]) -> str:
    pair = m.group()
    high, low = pair[0], pair[1]
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def _first_lone(text: str) -> int:
    """The code point of the first surrogate of ``text`` that is not one
    half of a pair (a high one followed by a low one)."""
    i = 0
    while True:
        m = LONE_SURROGATE.search(text, i)
        if m is None:
            return 0xD800  # (not reached for a text with_pairs_joined refused)
        c = ord(m.group())
        j = m.start()
        if c <= 0xDBFF and j + 1 < len(text) and 0xDC00 <= ord(text[j + 1]) <= 0xDFFF:
            i = j + 2
            continue
        return c


#: an escape of a JSON string: ``\\uXXXX`` or a backslash and one character
_JSON_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|[\s\S])")
#: a ``\\uXXXX`` escape of a surrogate, to look for before scanning
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def go_json_escapes(text: str) -> str:
    """The JSON text ``text`` with each ``\\uXXXX`` escape of a lone
    surrogate written ``\\ufffd`` instead, as Go's ``encoding/json``
    reads it (``decode.go`` ``unquote``: a high surrogate escape followed
    by a low one is the character they stand for; any other surrogate
    escape decodes to U+FFFD, the escape after it read on its own). The
    kubelet's decoders read JSON so (a static pod's manifest); Python's
    reader would keep the lone surrogate, which has no UTF-8. The text is
    returned as it is when it has no surrogate escape; escapes are met
    left to right, so an escaped backslash followed by ``u`` is no escape."""
    if _SURROGATE_ESCAPE.search(text) is None:
        return text
    found = list(_JSON_ESCAPE.finditer(text))
    out: list[str] = []
    last = 0
    i = 0
    while i < len(found):
        m = found[i]
        i += 1
        digits = m.group(1)
        if digits is None:
            continue
        code = int(digits, 16)
        if not 0xD800 <= code <= 0xDFFF:
            continue
        if code <= 0xDBFF and i < len(found):
            nxt = found[i]
            low = nxt.group(1)
            if nxt.start() == m.end() and low is not None and 0xDC00 <= int(low, 16) <= 0xDFFF:
                i += 1  # a pair: kept
                continue
        out.append(text[last:m.start()])
        out.append("\\ufffd")
        last = m.end()
    out.append(text[last:])
    return "".join(out)

"""``go_json_quote`` writes a string as Go's ``json.Marshal`` does, whether
the string needs escapes or not (a plain string is written as it is)."""

from __future__ import annotations

import random

from podnuma.golang.json import go_json_quote

_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _by_hand(text: str) -> str:
    out = []
    for ch in text:
        o = ord(ch)
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif o < 0x20 or ch in "<>&" or o in (0x2028, 0x2029):
            out.append(f"\\u{o:04x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def test_known_strings() -> None:
    assert go_json_quote("") == '""'
    assert go_json_quote("MemoryBlocks") == '"MemoryBlocks"'
    assert go_json_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_json_quote("<a&b>") == '"\\u003ca\\u0026b\\u003e"'
    assert go_json_quote("x\ny\x01\x7f") == '"x\\ny\\u0001\x7f"'
    assert go_json_quote("\u2028\u2029é") == '"\\u2028\\u2029é"'
    assert go_json_quote("a\ud800b") == '"a\ufffdb"'


def test_random_strings_match_the_rules() -> None:
    rng = random.Random(24)
    alphabet = [chr(c) for c in range(0x00, 0x80)] + [
        "\u2028", "\u2029", "\ud800", "\udfff", "é", "\u00a0", "\ufffd", "\U0001f600"
    ]
    plain_pool = [c for c in alphabet if c.isalnum() or c in "-_./ "]
    for _ in range(20_000):
        pool = plain_pool if rng.random() < 0.5 else alphabet
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 12)))
        assert go_json_quote(text) == _by_hand(text), repr(text)

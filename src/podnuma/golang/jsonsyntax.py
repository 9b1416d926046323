"""Go's ``encoding/json`` syntax check (encoding/json/scanner.go: the
scanner ``Unmarshal`` and ``Valid`` run over the whole input before
decoding): the first ``SyntaxError`` of a text in Go's words, for the
readers that quote Go's JSON errors (static pods, the kubelet's
configuration file). Not compiled (off the admission path)."""

from __future__ import annotations

import re

from podnuma.golang.strconv import go_quote

__all__ = ["go_json_syntax_error"]


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

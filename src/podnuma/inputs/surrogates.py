"""Strings with no UTF-8: a lone surrogate (U+D800..U+DFFF alone), which
a YAML or JSON escape (``"\\ud800"``) or a JSON request body's text can
hold once parsed. The readers (:mod:`podnuma.inputs.documents`,
:mod:`podnuma.inputs.goyaml`) refuse them in these words: no answer could
be written with one."""

from __future__ import annotations

import re

__all__ = ["LONE_SURROGATE", "lone_surrogate_message"]

#: a surrogate code point: alone in a Python string (a pair is one code point)
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_message(text: str, *, key: bool = False) -> str | None:
    """The refusal of a string (a key, with ``key``) holding a lone
    surrogate (a ``"\\ud800"`` escape of YAML or JSON: no UTF-8 for it, so
    no answer could be written), in the wording of the raw text's
    refusal; ``None`` for a string without one."""
    if text.isascii():
        return None
    lone = LONE_SURROGATE.search(text)
    if lone is None:
        return None
    what = "a key" if key else "the value"
    return (f"not Unicode text: a lone surrogate (\\u{ord(lone.group()):04x}, written as an escape) "
            f"in {what}")

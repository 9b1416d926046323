"""Two-space indented JSON, quicker: the text ``json.dumps(doc, indent=2,
ensure_ascii=False)`` gives, in about a quarter of the time.

The standard library writes indented JSON with its pure-Python encoder (its
C encoder only writes compact JSON). Here the C encoder writes the compact
text, with the standard library's own spelling of every number, key and
string, and msgspec's formatter indents it: the formatter copies each token
as it is and only adds the line breaks and the indentation, which are the
standard library's (``",\\n"``, ``": "``, two spaces a level, ``[]`` and
``{}`` for empty containers). Where the compact text is not JSON that
formatter reads (``NaN`` and ``Infinity``, which the standard library writes
for non-finite floats) or not UTF-8 (a lone surrogate in a string), the
standard library's indented encoder writes the document instead.

Only where msgspec is loaded already (``fleet analyze``, whose reports are
the large documents): importing it costs a command that prints a small
document more than it saves.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["indented_json"]


def indented_json(doc: Any) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)``, the same text."""
    msgspec: Any = sys.modules.get("msgspec")
    if msgspec is None:
        return json.dumps(doc, indent=2, ensure_ascii=False)
    compact = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    try:
        indented: bytes = msgspec.json.format(compact.encode("utf-8"), indent=2)
        return indented.decode("utf-8")
    except (msgspec.DecodeError, UnicodeError):
        return json.dumps(doc, indent=2, ensure_ascii=False)

"""A run's steps as YAML text without PyYAML's emitter, for
:func:`podnuma.render.yaml_text.write_yaml_run` (a speed module beside it).

PyYAML's emitter is Python through and through: a step of ``simulate -o
yaml`` (about 40 scalars in 25 mappings and lists) costs it about half a
millisecond, thirty times what the JSON writer takes. A step's document is
plain data (dicts, lists, strings, integers, booleans, ``None``) whose
strings are mostly names, identifiers and CPU lists, and for such data the
emitter's block style, as :class:`~podnuma.render.yaml_text._Dumper` sets
it (lists indented under their key), comes down to a few rules:

* a mapping's entries one to a line, ``key: value``; a non-empty mapping or
  list as a value starts on the next line, its entries (or items) two
  columns further in; an empty one is written in flow style, ``{}`` or
  ``[]``, after the key;
* a list's items ``- item``; an item that is a non-empty mapping has its
  first entry on the dash's line and the others two columns past the dash;
* ``None``, ``True`` and ``False`` as ``null``, ``true`` and ``false``, an
  integer in decimal;
* a string of letters, digits and ``_ . , / -`` that starts with a letter
  or a digit (no space, so the emitter never folds it; no character that
  means something in YAML where it stands) plain when the dumper's resolver
  reads it back as a string, else single-quoted (``'1'``, ``'true'``: both
  styles are open to such a string; the emitter takes the first that
  reads back as the same string).

Anything else (another string, a float, a key that is not a string or is
long, a list in a list, the same list or mapping twice in one step, which
the emitter writes with an anchor and an alias) makes :func:`step_text`
return ``None``, and the caller's emitter writes that step as before.
``tests/render/test_yaml_steps.py`` holds the text to PyYAML's, byte for
byte, on hostile and random documents and on real runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["step_text"]

#: the strings written here (see the module's docstring)
_SHAPE = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.,/-]*\Z")
#: the tag of a plain string as the resolver gives it
_STR_TAG = "tag:yaml.org,2002:str"
#: the longest key written here (the emitter writes a key of 128
#: characters or more as a complex key, ``? key``)
_KEY_MAX = 100
#: each string's text, by string (kept for the run's repeats; started
#: afresh past ``_KEPT`` entries): the text as the one dumper that calls
#: :func:`step_text` resolves it (PyYAML's safe resolver, in yaml_text)
_TEXT: dict[str, str] = {}
_KEPT = 8192

Resolve = Callable[[str], str]


class _Other(Exception):
    """A value this module leaves to the emitter."""


def _string(s: str, resolve: Resolve) -> str:
    got = _TEXT.get(s)
    if got is None:
        if _SHAPE.match(s) is None:
            raise _Other
        got = s if resolve(s) == _STR_TAG else f"'{s}'"
        if len(_TEXT) >= _KEPT:
            _TEXT.clear()
        _TEXT[s] = got
    return got


def _scalar(v: Any, resolve: Resolve) -> str:
    t = type(v)
    if t is str:
        return _string(v, resolve)
    if v is None:
        return "null"
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    raise _Other


def _mapping(m: dict[Any, Any], indent: int, lead: str, lines: list[str], seen: set[int],
             resolve: Resolve) -> None:
    """The entries of ``m`` at column ``indent``, the first after ``lead``
    (a list's dash, or the indentation)."""
    pad = " " * indent
    for k, v in m.items():
        if type(k) is not str or len(k) > _KEY_MAX:
            raise _Other
        key = _string(k, resolve)
        t = type(v)
        if t is dict or t is list:
            if id(v) in seen:
                raise _Other  # (an anchor and an alias)
            seen.add(id(v))
            if not v:
                lines.append(f"{lead}{key}: {'{}' if t is dict else '[]'}")
            else:
                lines.append(f"{lead}{key}:")
                if t is dict:
                    _mapping(v, indent + 2, " " * (indent + 2), lines, seen, resolve)
                else:
                    _sequence(v, indent + 2, lines, seen, resolve)
        else:
            lines.append(f"{lead}{key}: {_scalar(v, resolve)}")
        lead = pad


def _sequence(items: list[Any], indent: int, lines: list[str], seen: set[int],
              resolve: Resolve) -> None:
    """The items of ``items``, their dashes at column ``indent``."""
    dash = " " * indent + "- "
    for v in items:
        t = type(v)
        if t is dict or t is list:
            if id(v) in seen:
                raise _Other
            seen.add(id(v))
            if not v:
                lines.append(dash + ("{}" if t is dict else "[]"))
            elif t is dict:
                _mapping(v, indent + 2, dash, lines, seen, resolve)
            else:
                raise _Other  # (a list in a list: ``- - item``)
        else:
            lines.append(dash + _scalar(v, resolve))


def step_text(step: Any, indent: int, resolve: Resolve) -> str | None:
    """``step`` (a non-empty mapping) as the emitter writes it as an item of
    a block list whose dashes are at column ``indent``, after an earlier
    item: from the line break that ends that item to the end of this one's
    last line. ``resolve``: the tag the dumper's resolver gives a plain
    scalar. ``None`` when the emitter is to write it (see the module's
    docstring)."""
    if type(step) is not dict or not step:
        return None
    lines: list[str] = [""]
    try:
        _mapping(step, indent + 2, " " * indent + "- ", lines, {id(step)}, resolve)
    except _Other:
        return None
    return "\n".join(lines)

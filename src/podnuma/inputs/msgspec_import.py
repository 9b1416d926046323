"""msgspec, imported without ``typing_extensions``.

``msgspec`` (its ``_utils`` module) imports ``typing_extensions`` when it is
installed, for its ``get_type_hints`` and its ``Required`` / ``NotRequired``;
``typing_extensions`` imports ``inspect``, and with it ``ast``, ``dis``,
``tokenize`` and ``linecache``: about 8 ms of CPU, a third of msgspec's
import, paid by every ``fleet analyze`` and every long ``simulate``
(docs/speed.md). On Python 3.11 and later the standard library's
``typing`` has all three, and msgspec falls back to them when
``typing_extensions`` cannot be imported; the types podnuma decodes (plain
JSON values, :class:`msgspec.Struct` classes with built-in field types)
read the same either way.

Importing this module imports msgspec with ``typing_extensions`` hidden
(``sys.modules`` holds ``None`` for it while msgspec loads: its import
raises ``ImportError``; afterwards ``sys.modules`` has exactly what it had
before, msgspec's modules added), unless msgspec or ``typing_extensions``
is loaded already or the Python is older than 3.11: then msgspec is
imported as it is. Take msgspec from it::

    from podnuma.inputs.msgspec_import import msgspec

A speed module: ``tests/inputs/test_msgspec_import.py`` checks that
``sys.modules`` is restored and that msgspec decodes the same values and
structs either way.
"""

from __future__ import annotations

import sys

__all__ = ["msgspec"]

_HIDDEN = "typing_extensions"
#: whether to hide it: not when msgspec or it is loaded already (nothing to
#: save), nor before Python 3.11 (``typing`` lacks what msgspec takes from it)
_HIDE = not ("msgspec" in sys.modules or _HIDDEN in sys.modules or sys.version_info < (3, 11))

if _HIDE:
    sys.modules[_HIDDEN] = None  # type: ignore[assignment]  # (its import raises ImportError)
try:
    import msgspec
finally:
    if _HIDE and sys.modules.get(_HIDDEN, 0) is None:
        del sys.modules[_HIDDEN]

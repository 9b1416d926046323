"""The one unit formatter: byte counts for people.

Sizes are shown in the largest binary unit that divides them exactly, as
Kubernetes quantities are written (``2Gi``, ``1536Mi``); ``approximate``
(pictures, never data) rounds sizes that are no whole number of MiB to one
decimal (``31.0Gi``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["UNITS", "format_bytes", "format_nodes"]

UNITS: Final = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


def format_bytes(n: int, *, approximate: bool = False, largest: str = "Ti") -> str:
    """``n`` bytes as the largest exact binary unit (``2Gi``, ``1536Mi``,
    ``0``), up to ``largest`` (``1024Gi`` with ``"Gi"``); with
    ``approximate``, sizes of 1Gi or more that are no whole number of MiB as
    ``31.0Gi``."""
    if n == 0:
        return "0"
    units = UNITS[[suffix for suffix, _ in UNITS].index(largest):]
    for suffix, unit in units:
        if n % unit == 0 and (not approximate or unit >= 1 << 20 or n < 1 << 30):
            return f"{n // unit}{suffix}"
    if approximate:
        for suffix, unit in units:
            if n >= unit:
                return f"{n / unit:.1f}{suffix}"
    return str(n)


def format_nodes(nodes: Iterable[int] | None) -> str:
    """NUMA node ids for people: ``0,1``; ``any`` for no preference
    (``None``), ``none`` for an empty set."""
    if nodes is None:
        return "any"
    lst = sorted(nodes)
    return ",".join(str(n) for n in lst) if lst else "none"

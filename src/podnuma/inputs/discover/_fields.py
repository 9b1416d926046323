"""Small validation helpers shared by the node forms (field paths, ints, quantities).

Every failure is an ``InputError`` whose ``path`` is relative to the node
mapping; the scenario loader prefixes ``node``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from podnuma.api.quantity import QuantityError, parse_quantity
from podnuma.errors import InputError

__all__ = [
    "join",
    "expect_mapping",
    "expect_list",
    "check_keys",
    "expect_int",
    "expect_str",
    "int_key",
    "parse_bytes",
    "MAX_CPUS",
    "MAX_NUMA_NODES",
    "MAX_UINT64",
]

#: Linux's limits (x86-64 ``CONFIG_NR_CPUS`` at most 8192, ``MAX_NUMNODES``
#: = 1 << ``NODES_SHIFT`` 10): CPU ids are below ``MAX_CPUS``, NUMA node ids
#: below ``MAX_NUMA_NODES``. Larger ids are refused as input errors rather
#: than turned into astronomically wide CPU bitmasks.
MAX_CPUS = 8192
MAX_NUMA_NODES = 1024
#: cadvisor's byte counts (memory, huge page pools) are uint64.
MAX_UINT64 = (1 << 64) - 1


def join(parent: str, key: str | int) -> str:
    """``parent.key`` or ``parent[index]`` (no leading dot at the top)."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def expect_mapping(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"must be a mapping, got {_kind(value)}", path=path)
    return value


def expect_list(value: object, path: str) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise InputError(f"must be a list, got {_kind(value)}", path=path)
    return value


def check_keys(doc: Mapping[Any, Any], allowed: Iterable[str], path: str) -> None:
    known = set(allowed)
    for key in doc:
        if key not in known:
            raise InputError(
                f"unknown field {key!r} (expected one of: {', '.join(sorted(known))})",
                path=join(path, str(key)),
            )


def expect_int(value: object, path: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be an integer, got {_kind(value)}", path=path)
    if value < minimum:
        what = "a positive" if minimum == 1 else "a non-negative" if minimum == 0 else f">= {minimum}"
        raise InputError(f"must be {what} integer, got {value}", path=path)
    if maximum is not None and value > maximum:
        raise InputError(f"must be at most {maximum}, got {value}", path=path)
    return value


def expect_str(value: object, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"must be a non-empty string, got {_kind(value)}", path=path)
    return value


def int_key(key: object, path: str) -> int:
    """A NUMA id used as a mapping key: an int (YAML) or a decimal string (JSON)."""
    if isinstance(key, bool):
        raise InputError(f"invalid NUMA node id {key!r}", path=path)
    if isinstance(key, int):
        value = key
    elif isinstance(key, str) and key.strip().isdigit():
        value = int(key.strip())
    else:
        raise InputError(f"invalid NUMA node id {key!r}", path=path)
    if value < 0:
        raise InputError(f"invalid NUMA node id {key!r}", path=path)
    if value >= MAX_NUMA_NODES:
        raise InputError(
            f"NUMA node id {value} out of range (Linux supports ids below {MAX_NUMA_NODES})", path=path
        )
    return value


def parse_bytes(value: object, path: str) -> int:
    """A resource quantity that must be a whole, non-negative number of bytes."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"must be a quantity (e.g. 64Gi), got {_kind(value)}", path=path)
    try:
        qty = parse_quantity(value)
    except QuantityError as err:
        raise InputError(f"invalid quantity {value!r}: {err}", path=path) from None
    nanos = qty.nanos
    if nanos < 0:
        raise InputError(f"must not be negative, got {value!r}", path=path)
    if nanos % 1_000_000_000:
        raise InputError(f"must be a whole number of bytes, got {value!r}", path=path)
    if nanos // 1_000_000_000 > MAX_UINT64:
        raise InputError(f"too large: {value!r} does not fit in 64 bits (as cadvisor reports bytes)", path=path)
    return nanos // 1_000_000_000


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, str):
        return f"string {value!r}" if value else "empty string"
    if isinstance(value, int | float):
        return f"number {value!r}"
    return type(value).__name__

"""Validation helpers shared by the node forms: the field kit
(``podnuma.fieldkit``) plus NUMA ids, bounded integers and byte quantities.

Every failure is an ``InputError`` whose ``path`` is relative to the node
mapping; the scenario loader prefixes ``node``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from podnuma.api.quantity import QuantityError, parse_quantity
from podnuma.errors import InputError
from podnuma.fieldkit import CONTROL_CHARACTERS, check_known_fields, field_path, wrong_type

__all__ = [
    "join",
    "check_keys",
    "expect_int",
    "expect_id",
    "expect_name",
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
    return field_path(parent, key)


def check_keys(doc: Mapping[Any, Any], allowed: Iterable[str], path: str) -> None:
    check_known_fields(doc, allowed, path)


def expect_int(value: object, path: str, *, minimum: int | None = 0, maximum: int | None = None) -> int:
    """An integer within the bounds (``minimum=None``: any integer, negative ones included)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(path, "an integer", value)
    if minimum is not None and value < minimum:
        what = "a positive" if minimum == 1 else "a non-negative" if minimum == 0 else f">= {minimum}"
        raise InputError(f"must be {what} integer, got {value}", path=path)
    if maximum is not None and value > maximum:
        raise InputError(f"must be at most {maximum}, got {value}", path=path)
    return value


def expect_str(value: object, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise wrong_type(path, "a non-empty string", value)
    return value


def expect_id(value: object, path: str) -> str:
    """A non-empty string without control characters or line separators
    (:data:`~podnuma.fieldkit.CONTROL_CHARACTERS`): a device's id (and the
    first check of the node's name), printed in the views, where an escape
    sequence would reach the terminal."""
    text = expect_str(value, path)
    bad = next((c for c in text if ord(c) in CONTROL_CHARACTERS), None)
    if bad is not None:
        raise InputError(f"must not contain control characters, got {bad!r} in {text!r}", path=path)
    return text


def expect_name(value: object, path: str) -> str:
    """The node's name: :func:`expect_id`, and not white space only. The
    kubelet's node name is its hostname (or ``--hostname-override``) through
    ``GetHostname`` (k8s.io/component-helpers ``node/util/hostname.go``):
    the white space around it trimmed, refused when nothing is left ("empty
    hostname is invalid"), lowercased. The name a scenario gives is taken
    as the name the kubelet runs under, as written (podnuma neither trims
    nor lowercases it; the kubelet checks nothing else)."""
    from podnuma.api.pod_validation import quote

    text = expect_id(value, path)
    if not text.strip():  # (Go's TrimSpace: the control characters are refused already)
        raise InputError(
            f"Invalid value: {quote(text)}: the kubelet's node name is its hostname with the white space "
            "around it trimmed, and nothing is left (the kubelet: empty hostname is invalid)",
            path=path,
        )
    return text


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
        raise wrong_type(path, "a quantity (e.g. 64Gi)", value)
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

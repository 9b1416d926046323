"""Go's ``hash/fnv`` FNV-1a 32-bit hash, as the kubelet's checkpoint checksums use it."""

from __future__ import annotations

from typing import Final

__all__ = ["fnv32a"]

_FNV32_OFFSET: Final = 0x811C9DC5
_FNV32_PRIME: Final = 0x01000193


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go's ``hash/fnv.New32a``)."""
    h = _FNV32_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV32_PRIME) & 0xFFFFFFFF
    return h



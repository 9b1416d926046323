"""CPU sets as immutable integer bitmasks.

Mirrors ``k8s.io/utils/cpuset`` (the ``CPUSet`` type the kubelet uses
everywhere): set algebra, sorted listing and the Linux list format
(``0-3,8``) in both directions. Bit ``i`` of the mask is logical CPU ``i``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

from podnuma.buildinfo import ENGINE_COMPILED
from podnuma.golang.strconv import go_atoi, go_quote

__all__ = ["CPUSet", "CPUSetParseError", "MAX_CPU_ID", "mask_ids", "parse_go_cpuset"]


class CPUSetParseError(ValueError):
    """A string is not a valid Linux CPU list."""


def mask_ids(mask: int) -> list[int]:
    """The ids of an integer mask's set bits, ascending (bit ``i`` is id ``i``)."""
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


_NO_CPUS: Final[tuple[int, ...]] = ()

# How ``from_mask`` and the set operations make a set without running
# ``__init__``. The one build-dependent line left here: only code that names
# the class makes a native instance directly (a helper elsewhere taking the
# class would call it generically, measured 2x slower compiled).
if ENGINE_COMPILED:
    # mypyc's native classes refuse object.__new__; their constructor with
    # no argument is as cheap there (the result's mask is set right after)
    def _new(cls: type[CPUSet]) -> CPUSet:
        return CPUSet()

else:
    _new = object.__new__  # builds without running __init__


class CPUSet:
    """An immutable set of non-negative integers backed by one ``int``."""

    __slots__ = ("_mask",)

    def __deepcopy__(self, memo: dict[int, object]) -> CPUSet:
        return self  # immutable


    def __init__(self, cpus: Iterable[int] = _NO_CPUS) -> None:
        if cpus is _NO_CPUS:  # the default: no iteration (the compiled _new)
            self._mask = 0
            return
        mask = 0
        for cpu in cpus:
            if cpu < 0:
                raise ValueError(f"negative CPU id {cpu}")
            mask |= 1 << cpu
        self._mask = mask

    # -- construction -------------------------------------------------
    @classmethod
    def from_mask(cls, mask: int) -> CPUSet:
        if mask < 0:
            raise ValueError("negative mask")
        s = _new(cls)
        s._mask = mask
        return s

    @classmethod
    def of(cls, *cpus: int) -> CPUSet:
        return cls(cpus)

    @classmethod
    def range(cls, start: int, stop: int) -> CPUSet:
        """CPUs ``start`` .. ``stop - 1``."""
        if stop <= start:
            return EMPTY
        return cls.from_mask(((1 << (stop - start)) - 1) << start)

    @classmethod
    def parse(cls, text: str) -> CPUSet:
        """Parse the Linux list format, as ``cpuset.Parse`` does.

        The empty string is the empty set. Each comma-separated element is a
        decimal id or an inclusive ``a-b`` range with ``a <= b``; anything
        else (spaces, empty elements, signs, reversed ranges) is rejected.
        """
        if text == "":
            return EMPTY
        mask = 0
        for part in text.split(","):
            bounds = part.split("-")
            if len(bounds) == 1:
                cpu = _parse_id(bounds[0], text)
                mask |= 1 << cpu
            elif len(bounds) == 2:
                lo = _parse_id(bounds[0], text)
                hi = _parse_id(bounds[1], text)
                if lo > hi:
                    raise CPUSetParseError(
                        f"invalid CPU list {text!r}: range {part!r} is reversed ({lo} > {hi})"
                    )
                mask |= ((1 << (hi - lo + 1)) - 1) << lo
            else:
                raise CPUSetParseError(f"invalid CPU list {text!r}: bad range {part!r}")
        return cls.from_mask(mask)

    # -- queries --------------------------------------------------------
    @property
    def mask(self) -> int:
        return self._mask

    def size(self) -> int:
        return self._mask.bit_count()

    def __len__(self) -> int:
        return self._mask.bit_count()

    def is_empty(self) -> bool:
        return self._mask == 0

    def __bool__(self) -> bool:
        return self._mask != 0

    def contains(self, cpu: int) -> bool:
        return cpu >= 0 and (self._mask >> cpu) & 1 == 1

    def __contains__(self, cpu: object) -> bool:
        return isinstance(cpu, int) and self.contains(cpu)

    def is_subset_of(self, other: CPUSet) -> bool:
        return self._mask & ~other._mask == 0

    def list(self) -> list[int]:
        """Members in ascending order."""
        return mask_ids(self._mask)

    def __iter__(self) -> Iterator[int]:
        return iter(mask_ids(self._mask))

    def min(self) -> int:
        if not self._mask:
            raise ValueError("empty CPU set has no minimum")
        return (self._mask & -self._mask).bit_length() - 1

    # -- algebra ----------------------------------------------------------
    # (the results of these operations on valid sets are never negative:
    # they are built directly, without from_mask's check)
    def union(self, *others: CPUSet) -> CPUSet:
        mask = self._mask
        for o in others:
            mask |= o._mask
        s = _new(CPUSet)
        s._mask = mask
        return s

    def intersection(self, other: CPUSet) -> CPUSet:
        s = _new(CPUSet)
        s._mask = self._mask & other._mask
        return s

    def difference(self, other: CPUSet) -> CPUSet:
        s = _new(CPUSet)
        s._mask = self._mask & ~other._mask
        return s

    def __or__(self, other: CPUSet) -> CPUSet:
        s = _new(CPUSet)
        s._mask = self._mask | other._mask
        return s

    # (the operators repeat the methods' bodies: mypyc compiles no method
    # aliases such as ``__and__ = intersection``)
    def __and__(self, other: CPUSet) -> CPUSet:
        s = _new(CPUSet)
        s._mask = self._mask & other._mask
        return s

    def __sub__(self, other: CPUSet) -> CPUSet:
        s = _new(CPUSet)
        s._mask = self._mask & ~other._mask
        return s

    def take_first(self, n: int) -> CPUSet:
        """The ``n`` lowest members (all of them when fewer)."""
        mask = self._mask
        out = 0
        while mask and n > 0:
            low = mask & -mask
            out |= low
            mask ^= low
            n -= 1
        return CPUSet.from_mask(out)

    # -- identity -------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, CPUSet) and other._mask == self._mask

    def __hash__(self) -> int:
        return hash(self._mask)

    def __str__(self) -> str:
        """Linux list format; contiguous runs of two or more become ``a-b``."""
        parts: list[str] = []
        mask = self._mask
        while mask:
            lo = (mask & -mask).bit_length() - 1
            # length of the run of ones starting at lo
            run = (~(mask >> lo)) & ((mask >> lo) + 1)
            length = run.bit_length() - 1
            hi = lo + length - 1
            parts.append(str(lo) if hi == lo else f"{lo}-{hi}")
            mask &= ~(((1 << length) - 1) << lo)
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"CPUSet({str(self)!r})"


def _parse_id(token: str, text: str) -> int:
    # Go's strconv.Atoi accepts a leading sign; a CPU id never has one, and
    # a negative id is rejected by cpuset.Parse, so digits only here.
    if not token or not token.isascii() or not token.isdigit():
        raise CPUSetParseError(f"invalid CPU list {text!r}: {token!r} is not a CPU id")
    if len(token) > 7 or int(token) > MAX_CPU_ID:
        # the kubelet would build a set of that size and run out of memory
        raise CPUSetParseError(
            f"invalid CPU list {text!r}: CPU id {token} is above the largest podnuma supports "
            f"({MAX_CPU_ID})"
        )
    return int(token)


EMPTY: Final = CPUSet()


#: The largest CPU id podnuma accepts in a list (the kubelet would try to
#: build a set of that size and run out of memory).
MAX_CPU_ID: Final = (1 << 20) - 1


def parse_go_cpuset(text: str) -> CPUSet:
    """``cpuset.Parse`` as the kubelet calls it: ``ValueError`` with Go's messages
    (``strconv.Atoi: parsing "x": invalid syntax``, ``invalid range "3-1"
    (3 > 1)``)."""
    if text == "":
        return CPUSet()
    mask = 0
    for part in text.split(","):
        bounds = part.split("-", 1)
        if len(bounds) == 1:
            lo = hi = go_atoi(bounds[0])
        else:
            lo = go_atoi(bounds[0])
            hi = go_atoi(bounds[1])
            if lo > hi:
                raise ValueError(f"invalid range {go_quote(part)} ({lo} > {hi})")
        if lo < 0 or hi > MAX_CPU_ID:
            # lo < 0 cannot happen (a leading '-' splits the range)
            raise ValueError(f"CPU id out of the range podnuma supports in {go_quote(part)}")
        mask |= ((1 << (hi - lo + 1)) - 1) << lo
    return CPUSet.from_mask(mask)

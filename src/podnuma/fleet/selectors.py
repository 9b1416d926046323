"""Label selectors of node groups: kubectl's ``-l`` syntax (set-based
``in``/``notin`` included) or ``{matchLabels, matchExpressions}``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type
from podnuma.fleet.files import _is_map

__all__ = ["Requirement", "parse_selector", "selector_matches"]


class Requirement:
    """One requirement of a label selector."""

    __slots__ = ("key", "op", "values")

    key: str
    op: str  # "=", "!=", "exists", "!exists", "in", "notin"
    values: tuple[str, ...]

    def __init__(self, key: str, op: str, values: tuple[str, ...] = ()) -> None:
    # written out, with the comparison, the hash and the repr (a frozen
    # ``dataclass`` would make them when the module is imported, on every
    # ``fleet`` command's start); not frozen at run time
        self.key = key
        self.op = op
        self.values = values

    def _fields(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.key, self.op, self.values)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(key={self.key!r}, op={self.op!r}, values={self.values!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Requirement)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


def parse_selector(value: Any, *, path: str, file: str) -> tuple[Requirement, ...]:
    """A label selector: ``"k=v,k2!=v2,k3,!k4"`` (kubectl's ``-l`` syntax,
    set-based ``in``/``notin`` included) or ``{matchLabels: {...},
    matchExpressions: [...]}``."""
    if isinstance(value, str):
        reqs: list[Requirement] = []
        for part in _split_selector(value):
            part = part.strip()
            if not part:
                continue
            m = re.fullmatch(r"([^\s=!]+)\s+(in|notin)\s+\(([^)]*)\)", part)
            if m:
                vals = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
                reqs.append(Requirement(m.group(1), m.group(2), vals))
            elif "!=" in part:
                k, v = part.split("!=", 1)
                reqs.append(Requirement(k.strip(), "!=", (v.strip(),)))
            elif "=" in part:
                k, v = part.split("=", 1)
                reqs.append(Requirement(k.strip(), "=", (v.strip().lstrip("="),)))
            elif part.startswith("!"):
                reqs.append(Requirement(part[1:].strip(), "!exists"))
            else:
                reqs.append(Requirement(part, "exists"))
        return tuple(reqs)
    if _is_map(value):
        reqs = []
        ml = value.get("matchLabels") or {}
        if not _is_map(ml):
            raise wrong_type(f"{path}.matchLabels", "a mapping", ml).in_file(file)
        for k, v in ml.items():
            reqs.append(Requirement(str(k), "=", (str(v),)))
        exprs = value.get("matchExpressions") or []
        if not isinstance(exprs, list):
            raise wrong_type(f"{path}.matchExpressions", "a list", exprs).in_file(file)
        ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}
        for i, e in enumerate(exprs):
            if not _is_map(e) or e.get("operator") not in ops:
                raise InputError(
                    "must be {key, operator: In|NotIn|Exists|DoesNotExist, values}",
                    path=f"{path}.matchExpressions[{i}]", file=file,
                )
            reqs.append(Requirement(str(e.get("key")), ops[str(e["operator"])],
                                    tuple(str(v) for v in e.get("values") or ())))
        return tuple(reqs)
    raise wrong_type(path, "a label selector (a string or a mapping)", value).in_file(file)


def _split_selector(text: str) -> Iterator[str]:
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            yield text[start:i]
            start = i + 1
    yield text[start:]


def selector_matches(reqs: Sequence[Requirement], labels: Mapping[str, str]) -> bool:
    for r in reqs:
        v = labels.get(r.key)
        if r.op == "=" and v != r.values[0]:
            return False
        if r.op == "!=" and v == r.values[0]:
            return False
        if r.op == "exists" and v is None:
            return False
        if r.op == "!exists" and v is not None:
            return False
        if r.op == "in" and v not in r.values:
            return False
        if r.op == "notin" and v in r.values:
            return False
    return True

"""Hostile inputs for the readers, as Hypothesis strategies.

Every strategy starts from a valid document of the repository (an example
pod, scenario, fleet dump, checkpoint) and makes it hostile in one of the
ways an attacker or a broken tool would:

- ``mutated``: one field replaced by an arbitrary JSON-like value (huge
  integers, NaN, long strings, wrong types) or removed;
- ``with_aliases``: YAML anchors and aliases, from a plain reuse to nests of
  aliases under a key no reader checks (``width ** depth`` nodes once
  expanded; at most 10**4 here -- a 9-wide, 9-deep bomb is tried apart,
  in a child process with a time and memory cap:
  ``tests/fuzz/test_past_the_limits.py``);
- ``deeply_nested``: a value wrapped in up to 60 lists or mappings (deeper
  nesting is tried apart, as the bombs);
- ``huge``: a 300 KiB string, a 20,000-item list, a 10**4000 integer;
- ``binary``: arbitrary bytes, invalid UTF-8, NUL and BOM characters, the
  valid text cut at a random byte.

Examples per property: ``PODNUMA_FUZZ_EXAMPLES`` (default 60; a third of
that for the properties that run a whole command per example), derandomized
(the same examples every run) unless ``PODNUMA_FUZZ_RANDOM=1``; a longer run
by hand: ``PODNUMA_FUZZ_EXAMPLES=5000 PODNUMA_FUZZ_RANDOM=1 pytest tests/fuzz``.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("PODNUMA_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("PODNUMA_FUZZ_RANDOM") != "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture],
    database=None,
)  # fmt: skip

#: for the properties whose every example runs a whole command
HEAVY = settings(FUZZ, max_examples=max(5, EXAMPLES // 3))

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=16),
    st.sampled_from(["1", "0", "-1", "1Gi", "500m", "1e9", "static", "Static", "0-3", "1,2",
                     "true", "yes", "no", "~", "Guaranteed", "", "\x00", "\ufeff", "1e2147483648",
                     "9" * 500, "a" * 10_000, "-0", "0x1F", "1_000"]),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += paths(v, (*prefix, i))
    return out


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    out = copy.deepcopy(doc)
    holder = out
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return out


def dropped(doc: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return doc
    out = copy.deepcopy(doc)
    holder = out
    for key in path[:-1]:
        holder = holder[key]
    del holder[path[-1]]
    return out


def dump(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, width=1 << 20, allow_unicode=True)


def mutated(doc: Any) -> st.SearchStrategy[str]:
    ps = paths(doc)
    return st.one_of(
        st.builds(lambda p, v: replaced(doc, p, v), st.sampled_from(ps), values),
        st.builds(lambda p: dropped(doc, p), st.sampled_from(ps)),
    ).map(lambda d: json.dumps(d, default=str, allow_nan=True))


_MARK = "__hostile_value__"


def _at(doc: Any, path: tuple[Any, ...], text: str) -> str:
    """``doc`` as YAML with the value at ``path`` replaced by raw YAML ``text``
    (a flow node)."""
    return dump(replaced(doc, path, _MARK)).replace(_MARK, text, 1)


def alias_nest(width: int, depth: int) -> str:
    """A flow mapping defining ``depth`` levels of ``width`` aliases each,
    ``width ** depth`` nodes once expanded."""
    levels = ["l0: &l0 [lol]"] + [
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, depth + 1)
    ]
    return "{" + ", ".join(levels) + "}"


def with_aliases(doc: Any) -> st.SearchStrategy[str]:
    ps = [p for p in paths(doc) if p]

    def reuse(p: tuple[Any, ...], q: tuple[Any, ...]) -> str:
        # the value at q anchored, then referred to again at p
        text = dump(replaced(replaced(doc, q, "__anchor__"), p, "__alias__"))
        value = json.dumps(_get(doc, q), default=str)
        return text.replace("__anchor__", f"&a {value}", 1).replace("__alias__", "*a", 1)

    def nest(p: tuple[Any, ...], width: int, depth: int) -> str:
        return _at(doc, p, alias_nest(width, depth))

    def inside(pq: tuple[tuple[Any, ...], tuple[Any, ...]]) -> bool:
        # p within the value anchored at q: no place left for the alias
        p, q = pq
        return len(q) < len(p) and p[: len(q)] == q

    pairs = st.tuples(st.sampled_from(ps), st.sampled_from(ps)).filter(lambda pq: not inside(pq))
    return st.one_of(
        pairs.map(lambda pq: reuse(*pq)),
        st.builds(nest, st.sampled_from(ps), st.integers(1, 10), st.integers(1, 4)),
        st.builds(lambda p: _at(doc, p, "*undefined"), st.sampled_from(ps)),
        st.builds(lambda p: _at(doc, p, "&self [*self]"), st.sampled_from(ps)),
        st.builds(lambda p: _at(doc, p, "!!python/object:os.system [echo]"), st.sampled_from(ps)),
        st.builds(lambda p: _at(doc, p, "<<: *a"), st.sampled_from(ps)),
    )


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def deeply_nested(doc: Any) -> st.SearchStrategy[str]:
    ps = [p for p in paths(doc) if p]

    def nest(p: tuple[Any, ...], depth: int, kind: str) -> str:
        if kind == "list":
            return _at(doc, p, "[" * depth + "]" * depth)
        return _at(doc, p, "{a: " * depth + "1" + "}" * depth)

    return st.builds(nest, st.sampled_from(ps), st.integers(2, 60), st.sampled_from(["list", "map"]))


def huge(doc: Any) -> st.SearchStrategy[str]:
    ps = [p for p in paths(doc) if p]
    big = st.sampled_from([
        json.dumps("x" * (300 << 10)),
        "[" + ",".join(["1"] * 20_000) + "]",
        "9" * 4000,
        "-" + "9" * 4000,
        "1e99999",
        json.dumps("1" + "0" * 5000 + "Gi"),
    ])  # fmt: skip
    return st.builds(lambda p, v: _at(doc, p, v), st.sampled_from(ps), big)


def binary(text: str) -> st.SearchStrategy[bytes]:
    data = text.encode("utf-8")

    def cut(n: int) -> bytes:
        return data[: n % (len(data) + 1)]

    def insert(n: int, junk: bytes) -> bytes:
        at = n % (len(data) + 1)
        return data[:at] + junk + data[at:]

    return st.one_of(
        st.binary(max_size=4000),
        st.builds(cut, st.integers(0, 1 << 20)),
        st.builds(insert, st.integers(0, 1 << 20),
                  st.sampled_from([b"\xff\xfe", b"\x00", b"\xc3", b"\xef\xbb\xbf", b"\x1b[2J", b"\r\n\t"])),
    )  # fmt: skip


def hostile_text(doc: Any) -> st.SearchStrategy[bytes]:
    """Every kind above, as the bytes of a file or a request body."""
    text = dump(doc)
    as_bytes = st.one_of(mutated(doc), with_aliases(doc), deeply_nested(doc), huge(doc)).map(
        lambda t: t.encode("utf-8", "surrogatepass")
    )
    return st.one_of(as_bytes, binary(text))

"""CPU sets: the Linux list format both ways, set algebra (k8s.io/utils/cpuset)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podnuma.machine.cpuset import CPUSet, CPUSetParseError

# (text, members, canonical text) -- cpuset.Parse / String tables
PARSE = [
    ("", [], ""),
    ("0", [0], "0"),
    ("1", [1], "1"),
    ("0-3", [0, 1, 2, 3], "0-3"),
    ("0-3,8", [0, 1, 2, 3, 8], "0-3,8"),
    ("1,3,5", [1, 3, 5], "1,3,5"),
    ("8,0-3", [0, 1, 2, 3, 8], "0-3,8"),
    ("0,1,2", [0, 1, 2], "0-2"),
    ("2-2", [2], "2"),
    ("0-1,1-2", [0, 1, 2], "0-2"),
    ("5-7,0-1,3", [0, 1, 3, 5, 6, 7], "0-1,3,5-7"),
    ("100-102", [100, 101, 102], "100-102"),
]

BAD = ["a", "1-", "-1", "3-1", "1,,2", " 1", "1 ", "1-2-3", ",", "1,", "0x1", "1.5", "--"]


@pytest.mark.parametrize(("text", "members", "canonical"), PARSE)
def test_parse_and_format(text: str, members: list[int], canonical: str) -> None:
    s = CPUSet.parse(text)
    assert s.list() == members
    assert str(s) == canonical
    assert s.size() == len(members)


@pytest.mark.parametrize("text", BAD)
def test_malformed_lists_are_errors(text: str) -> None:
    with pytest.raises(CPUSetParseError):
        CPUSet.parse(text)


def test_algebra() -> None:
    a, b = CPUSet.parse("0-5"), CPUSet.parse("4-9")
    assert str(a | b) == "0-9"
    assert str(a & b) == "4-5"
    assert str(a - b) == "0-3"
    assert CPUSet.parse("4-5").is_subset_of(a)
    assert not b.is_subset_of(a)
    assert str(CPUSet.parse("3,7-9,12").take_first(3)) == "3,7-8"
    assert CPUSet.parse("3,7").min() == 3
    assert 7 in CPUSet.parse("3,7") and 4 not in CPUSet.parse("3,7")
    assert CPUSet() == CPUSet.parse("") and not CPUSet()
    with pytest.raises(ValueError):
        CPUSet.of(-1)


@given(st.sets(st.integers(min_value=0, max_value=300)))
def test_round_trip(members: set[int]) -> None:
    s = CPUSet(members)
    assert CPUSet.parse(str(s)) == s
    assert s.list() == sorted(members)

"""The spool behaves as ``tempfile.SpooledTemporaryFile`` for the calls made
on it, in memory and after rolling over to a temporary file."""

from __future__ import annotations

import tempfile
from typing import Any

import pytest

from podnuma.inputs.spool import Spool, spooled


def _play(f: Any, chunks: list[Any]) -> list[Any]:
    """The same calls on a spool or the standard library's class; what each returned."""
    seen: list[Any] = []
    for chunk in chunks:
        seen.append(f.write(chunk))
    seen.append(f.tell())
    seen.append(f.seek(3))
    seen.append(f.read(5))
    seen.append(f.seek(0, 2))
    seen.append(f.seek(0))
    seen.append(f.read())
    seen.append(f.seek(2))
    seen.append(f.truncate())
    seen.append(f.seek(0))
    seen.append(f.read())
    return seen


@pytest.mark.parametrize("max_size", [0, 4, 1 << 20])
def test_bytes_as_the_standard_spool(max_size: int) -> None:
    chunks = [b"abc\r\n", b"\x00\xff" * 10, b"end"]
    with Spool(max_size) as ours, tempfile.SpooledTemporaryFile(max_size=max_size) as theirs:
        assert _play(ours, chunks) == _play(theirs, chunks)
        assert ours.rolled == theirs._rolled  # type: ignore[attr-defined]
    assert ours.closed


@pytest.mark.parametrize("max_size", [0, 4, 1 << 20])
def test_text_as_the_standard_spool(max_size: int) -> None:
    # newlines ("\r\n", "\r") and characters beyond ASCII read back as the
    # standard class reads them back, before and after the rollover
    chunks = ["ab\r\ncd\rx\n", "é€😀" * 5, "end\n"]
    with Spool(max_size, mode="w+", encoding="utf-8") as ours, \
            tempfile.SpooledTemporaryFile(max_size=max_size, mode="w+", encoding="utf-8") as theirs:
        assert _play(ours, chunks) == _play(theirs, chunks)
        assert ours.rolled == theirs._rolled  # type: ignore[attr-defined]


def test_rolls_over_past_max_size_and_keeps_the_position() -> None:
    f = Spool(10)
    f.write(b"0123456789")
    assert not f.rolled  # at the limit: still in memory
    f.write(b"a")
    assert f.rolled
    assert f.tell() == 11
    f.write(b"bc")
    f.seek(0)
    assert f.read() == b"0123456789abc"
    f.close()


def test_truncate_to_a_size_beyond_the_limit_rolls_over() -> None:
    f = Spool(4)
    f.write(b"ab")
    f.truncate(8)
    assert f.rolled
    f.seek(0)
    assert f.read() == b"ab\x00\x00\x00\x00\x00\x00"
    f.close()


def test_typed_factory_gives_a_spool() -> None:
    with spooled(16, mode="w+", encoding="utf-8") as f:
        f.write("x")
        assert isinstance(f, Spool)

"""An input past its byte limit (a link to ``/dev/zero``, a pipe that never
ends) is refused having held the limit in memory once, not twice: what was
read is let go before the refusal, and never joined into a second copy."""

from __future__ import annotations

import errno
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from podnuma.errors import InputError
from podnuma.inputs.documents import read_bytes, read_within
from podnuma.inputs.limits import ReadLimits

LIMIT = 48 << 20


def _peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        try:
            fn()
        except (InputError, OSError) as e:
            assert "larger than the limit" in str(e)
        else:
            raise AssertionError("read past the limit without a refusal")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_device_past_the_limit_costs_the_limit_once(tmp_path: Path) -> None:
    zero = tmp_path / "zero"
    zero.symlink_to("/dev/zero")
    with zero.open("rb") as fh:
        peak = _peak(lambda: read_within(fh, LIMIT, str(zero)))
    assert LIMIT <= peak < LIMIT * 1.25, peak  # (joined into a second copy: twice the limit)
    limits = ReadLimits(max_bytes=LIMIT)
    peak = _peak(lambda: read_bytes(zero, what="scenario", limits=limits))
    assert LIMIT <= peak < LIMIT * 1.25, peak


def test_past_the_limit_is_the_same_refusal(tmp_path: Path) -> None:
    zero = tmp_path / "zero"
    zero.symlink_to("/dev/zero")
    with pytest.raises(InputError) as e:
        read_bytes(zero, what="scenario", limits=ReadLimits(max_bytes=1 << 20))
    assert e.value.message == f"scenario file is larger than the limit of {1 << 20} bytes"
    with zero.open("rb") as fh, pytest.raises(OSError) as o:
        read_within(fh, 1 << 20, "z")
    assert o.value.errno == errno.EFBIG
    # at the limit exactly: read whole
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * (1 << 20))
    assert len(read_bytes(exact, what="scenario", limits=ReadLimits(max_bytes=1 << 20))) == 1 << 20
    with exact.open("rb") as fh:
        assert read_within(fh, 1 << 20, "e") == b"x" * (1 << 20)

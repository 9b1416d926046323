"""go-yaml's reader as podnuma follows it for a kubelet configuration file
(:class:`podnuma.inputs.documents._GoYAMLRead`): decoded a read at a time
with Python's codec, it must give what decoding a character at a time
gives (the reference below, the reader as it was before: every
character's value, width and problem as go-yaml's ``readerc.go`` has
them), on texts with problems, characters cut by a read's end and
nothing wrong at all, in UTF-8 and UTF-16 both ways."""

from __future__ import annotations

import random
from typing import Literal

import pytest

from podnuma.inputs.documents import _GO_YAML_CHUNK, _go_yaml_printable, _GoYAMLRead


class _Reference:
    """One character at a time (the reader before it used the codec)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        chars: list[str] = []
        self.ends: list[int] = []
        self.reads: list[tuple[int, int]] = []
        self.problem: tuple[int, int, str] | None = None
        if data.startswith(b"\xff\xfe"):
            encoding, pos = "le", 2
        elif data.startswith(b"\xfe\xff"):
            encoding, pos = "be", 2
        elif data.startswith(b"\xef\xbb\xbf"):
            encoding, pos = "utf8", 3
        else:
            encoding, pos = "utf8", 0
        size = len(data)
        read_end = 0
        while True:
            eof = read_end == size
            if not eof:
                read_end += min(_GO_YAML_CHUNK - max(0, read_end - pos), size - read_end)
            while pos < read_end:
                value, width, problem = self._char(pos, read_end, eof, encoding)
                if width == 0:
                    break  # incomplete: carried over to the next read
                if problem is None and not _go_yaml_printable(value):
                    problem = f"control characters are not allowed: #x{value:04x}"
                if problem is not None:
                    if self.problem is None:
                        self.problem = (len(self.reads), len(chars), problem)
                    value = 0x20
                chars.append(chr(value))
                pos += width
                self.ends.append(pos)
            self.reads.append((read_end, len(chars)))
            if eof:
                break
        self.text = "".join(chars)

    def _char(self, pos: int, read_end: int, eof: bool, encoding: str) -> tuple[int, int, str | None]:
        """The character at ``pos``: (its value, its width, a problem);
        width 0: incomplete, more to read."""
        data, avail = self.data, read_end - pos
        if encoding == "utf8":
            octet = data[pos]
            width = 1 if octet < 0x80 else 2 if octet & 0xE0 == 0xC0 else 3 if octet & 0xF0 == 0xE0 \
                else 4 if octet & 0xF8 == 0xF0 else 0
            if width == 0:
                return 0, 1, "invalid leading UTF-8 octet"
            if width > avail:
                return (0, avail, "incomplete UTF-8 octet sequence") if eof else (0, 0, None)
            value = octet & (0x7F, 0x1F, 0x0F, 0x07)[width - 1]
            for k in range(1, width):
                trail = data[pos + k]
                if trail & 0xC0 != 0x80:
                    return 0, k, "invalid trailing UTF-8 octet"
                value = (value << 6) + (trail & 0x3F)
            if width > 1 and value < (0, 0x80, 0x800, 0x10000)[width - 1]:
                return 0, width, "invalid length of a UTF-8 sequence"
            if 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
                return 0, width, "invalid Unicode character"
            return value, width, None
        order: Literal["little", "big"] = "little" if encoding == "le" else "big"
        if avail < 2:
            return (0, avail, "incomplete UTF-16 character") if eof else (0, 0, None)
        value = int.from_bytes(data[pos:pos + 2], order)
        if value & 0xFC00 == 0xDC00:
            return 0, 2, "unexpected low surrogate area"
        if value & 0xFC00 != 0xD800:
            return value, 2, None
        if avail < 4:
            return (0, avail, "incomplete UTF-16 surrogate pair") if eof else (0, 0, None)
        low = int.from_bytes(data[pos + 2:pos + 4], order)
        if low & 0xFC00 != 0xDC00:
            return 0, 2, "expected low surrogate area"
        return 0x10000 + ((value & 0x3FF) << 10) + (low & 0x3FF), 4, None


def _same(data: bytes) -> None:
    """The same text, reads and problem; past the first problem (where
    go-yaml stops reading) the same answer to every ``refused``."""
    new, old = _GoYAMLRead(data), _Reference(data)
    assert new.problem == old.problem
    if old.problem is None:
        assert new.text == old.text
        assert new.reads == old.reads
    else:
        read, at, _ = old.problem
        assert new.text[: at + 1] == old.text[: at + 1]
        assert new.reads[:read] == old.reads[:read]
    for needed in (0, 1, len(old.text) // 2, len(old.text)):
        assert new.refused(needed) == _refused(old, needed)


def _refused(old: _Reference, needed: int) -> tuple[int, str] | None:
    if old.problem is None:
        return None
    last = next((i for i, (_, count) in enumerate(old.reads) if count >= needed), len(old.reads) - 1)
    read, at, words = old.problem
    return (at, words) if read <= last else None


_PIECES = ("a", "key: value\n", "é", "€", "😀", "\t", "\x85", "\u2028", "\ufeff", "中文", " " * 7)
_BAD = (b"\x00", b"\x01", b"\x7f", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf5\x80\x80\x80", b"\xff",
        b"\xe0\x80", b"\xf0\x9f", b"\xc3")
_BAD16 = ("\ud800", "\udc00", "\ud800x", "\x00", "\x1b")


def _text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    while sum(map(len, out)) < size:
        out.append(rng.choice(_PIECES))
    return "".join(out)


@pytest.mark.parametrize("seed", range(60))
def test_utf8_as_a_character_at_a_time(seed: int) -> None:
    rng = random.Random(f"goyaml-read-utf8:{seed}")
    data = _text(rng, rng.choice((10, 600, 3000))).encode("utf-8")
    for _ in range(rng.randrange(0, 4)):
        at = rng.randrange(len(data) + 1)
        data = data[:at] + rng.choice(_BAD) + data[at:]
    if rng.random() < 0.2:
        data = b"\xef\xbb\xbf" + data
    if rng.random() < 0.3:
        data = data[:rng.randrange(len(data) + 1)]  # a character cut at the end
    _same(data)


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("order", ["le", "be"])
def test_utf16_as_a_character_at_a_time(seed: int, order: Literal["le", "be"]) -> None:
    rng = random.Random(f"goyaml-read-utf16:{order}:{seed}")
    text = _text(rng, rng.choice((10, 600, 3000)))
    for _ in range(rng.randrange(0, 3)):
        at = rng.randrange(len(text) + 1)
        text = text[:at] + rng.choice(_BAD16) + text[at:]
    codec = "utf-16-le" if order == "le" else "utf-16-be"
    data = (b"\xff\xfe" if order == "le" else b"\xfe\xff") + text.encode(codec, "surrogatepass")
    if rng.random() < 0.3:
        data = data[:rng.randrange(2, len(data) + 1)]  # an odd byte, a pair cut at the end
    _same(data)


def test_a_pair_cut_by_every_read_end() -> None:
    """A surrogate pair (UTF-16) or a four-byte character (UTF-8) across
    each read's end: carried over, the next read shorter."""
    for shift in range(4):
        _same(b"\xff\xfe" + ("a" * shift + "😀" * 2000).encode("utf-16-le"))
        _same(("a" * shift + "😀" * 2000).encode("utf-8"))
    assert _GO_YAML_CHUNK == 512


def test_problems_named_as_go_yaml_names_them() -> None:
    cases = {
        b"ab\x01": (0, 2, "control characters are not allowed: #x0001"),
        b"a\xffb": (0, 1, "invalid leading UTF-8 octet"),
        b"\xff\xfe" + "a\ud800b".encode("utf-16-le", "surrogatepass"): (0, 1, "expected low surrogate area"),
        b"\xfe\xff" + "a\udc00".encode("utf-16-be", "surrogatepass"): (0, 1, "unexpected low surrogate area"),
        b"\xff\xfea\x00b": (1, 1, "incomplete UTF-16 character"),
        b"\xff\xfea\x00\x00\xd8": (1, 1, "incomplete UTF-16 surrogate pair"),
    }
    for data, problem in cases.items():
        assert _GoYAMLRead(data).problem == problem, data
        _same(data)
    assert _go_yaml_printable(0x85) and not _go_yaml_printable(0x7F)

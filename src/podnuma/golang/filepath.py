"""Go's ``path/filepath`` pattern matching on Unix: ``Match``, ``Glob``,
``Clean`` and ``Join``, as the kubelet's file source lists its static-pod
directory (``filepath.Glob(filepath.Join(path, "[^.]*"))`` in
``pkg/kubelet/config/file.go``).

Mirrors ``src/path/filepath/match.go`` and ``path.go`` of the Go release the
oracle is built with (the Unix rules: ``/`` the only separator, ``\\``
escapes the next byte of a pattern). Paths and patterns are bytes, as Go's
strings are: a name that is no UTF-8 is matched byte by byte, and ``?`` or
a character class takes one character as ``utf8.DecodeRuneInString`` reads
it (a byte that starts no valid sequence is U+FFFD, one byte wide).

The facts carried over:

* a pattern is made of chunks, each a run of ``*`` then literal text,
  ``?`` and ``[...]`` classes; ``*`` and ``?`` never match ``/``;
* a class is ``[`` then an optional ``^`` (negation), then one or more
  characters or ranges ``lo-hi`` (``\\`` escapes one), then ``]``; ``-``
  or ``]`` where a character is due, an unfinished class or a trailing
  ``\\`` is a syntax error (:class:`BadPattern`, Go's ``ErrBadPattern``,
  ``syntax error in pattern``) -- found only where the matcher gets to it:
  a chunk is checked whole even after it failed to match, but a pattern is
  not read past the first chunk that cannot match;
* ``Glob`` checks the pattern against the empty name first; a pattern with
  no meta character (``*?[\\``) is the one path if ``lstat`` finds it;
  else the pattern's directory part is globbed first when it has meta
  characters too (at most 10000 levels, a syntax error past that), and
  each directory's entries, sorted, are matched against the last element;
  a directory that cannot be looked at or read lists nothing (the error
  is ignored); the matches are ``Join(dir, name)``, so cleaned.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

__all__ = ["BadPattern", "clean", "glob", "has_meta", "join", "match"]

_SEP = ord("/")
_STAR, _QUESTION, _OPEN, _CLOSE = ord("*"), ord("?"), ord("["), ord("]")
_BACKSLASH, _CARET, _DASH = ord("\\"), ord("^"), ord("-")
_RUNE_ERROR = 0xFFFD
#: Go's ``pathSeparatorsLimit``: how deep the directory part is globbed
_DEPTH_LIMIT = 10000


class BadPattern(ValueError):
    """Go's ``filepath.ErrBadPattern``."""

    def __init__(self) -> None:
        super().__init__("syntax error in pattern")


def _decode_rune(s: bytes, at: int) -> tuple[int, int]:
    """The character at ``at`` and its width, as ``utf8.DecodeRune``: a
    byte that starts no valid UTF-8 sequence (overlong forms, surrogates
    and values past U+10FFFF included) is U+FFFD of width 1."""
    lead = s[at]
    if lead < 0x80:
        return lead, 1
    width = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
    if width == 0 or at + width > len(s):
        return _RUNE_ERROR, 1
    try:
        text = s[at:at + width].decode("utf-8")
    except UnicodeDecodeError:
        return _RUNE_ERROR, 1
    return ord(text), width


def _scan_chunk(pattern: bytes) -> tuple[bool, bytes, bytes]:
    """Leading stars, the chunk up to the next star outside a class, the rest."""
    star = False
    while pattern[:1] == b"*":
        pattern = pattern[1:]
        star = True
    in_range = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == _BACKSLASH:
            if i + 1 < len(pattern):
                i += 1
        elif c == _OPEN:
            in_range = True
        elif c == _CLOSE:
            in_range = False
        elif c == _STAR and not in_range:
            return star, pattern[:i], pattern[i:]
        i += 1
    return star, pattern, b""


def _get_esc(chunk: bytes, at: int) -> tuple[int, int]:
    """One character of a class at ``chunk[at:]`` (``\\`` escaping it)
    and where what follows starts; :class:`BadPattern` where none can be,
    or nothing follows it."""
    if at >= len(chunk) or chunk[at] in (_DASH, _CLOSE):
        raise BadPattern()
    if chunk[at] == _BACKSLASH:
        at += 1
        if at >= len(chunk):
            raise BadPattern()
    r, n = _decode_rune(chunk, at)
    if (r == _RUNE_ERROR and n == 1) or at + n >= len(chunk):
        raise BadPattern()
    return r, at + n


def _match_chunk(chunk: bytes, s: bytes) -> bytes | None:
    """What of ``s`` is left after ``chunk`` matched its start, ``None`` when
    it does not; the chunk is read to its end (its syntax checked) even
    after the match failed."""
    failed = False
    i, j = 0, 0  # (in chunk, in s)
    end, size = len(chunk), len(s)
    while i < end:
        failed = failed or j >= size
        c = chunk[i]
        if c == _OPEN:
            r = 0
            if not failed:
                r, n = _decode_rune(s, j)
                j += n
            i += 1
            negated = False
            if i < end and chunk[i] == _CARET:
                negated = True
                i += 1
            matched = False
            ranges = 0
            while True:
                if i < end and chunk[i] == _CLOSE and ranges > 0:
                    i += 1
                    break
                lo, i = _get_esc(chunk, i)
                hi = lo
                if chunk[i] == _DASH:
                    hi, i = _get_esc(chunk, i + 1)
                matched = matched or lo <= r <= hi
                ranges += 1
            failed = failed or matched == negated
            continue
        if c == _QUESTION:
            if not failed:
                failed = s[j] == _SEP
                _, n = _decode_rune(s, j)
                j += n
            i += 1
            continue
        if c == _BACKSLASH:
            i += 1
            if i >= end:
                raise BadPattern()
        if not failed:
            failed = chunk[i] != s[j]
            j += 1
        i += 1
    return None if failed else s[j:]


def match(pattern: bytes, name: bytes) -> bool:
    """Whether ``name`` matches the whole ``pattern`` (Go's
    ``filepath.Match``); :class:`BadPattern` for a syntax error met."""
    while pattern:
        star, chunk, pattern = _scan_chunk(pattern)
        if star and not chunk:
            return b"/" not in name  # (a trailing star: the rest, but no separator)
        t = _match_chunk(chunk, name)
        if t is not None and (not t or pattern):
            name = t
            continue
        if star:
            found = False
            i = 0
            while i < len(name) and name[i] != _SEP:
                t = _match_chunk(chunk, name[i + 1:])
                i += 1
                if t is not None:
                    if not pattern and t:
                        continue
                    name = t
                    found = True
                    break
            if found:
                continue
        return False
    return not name


def has_meta(path: bytes) -> bool:
    """Whether ``path`` holds a character ``Glob`` treats as a pattern."""
    return any(c in path for c in (b"*", b"?", b"[", b"\\"))


def clean(path: bytes) -> bytes:
    """The shortest equivalent path, lexically (Go's ``filepath.Clean``):
    repeated separators, ``.`` elements and ``..`` after a name removed,
    ``..`` at the root dropped; empty is ``.``."""
    if not path:
        return b"."
    rooted = path[0] == _SEP
    parts: list[bytes] = []
    for part in path.split(b"/"):
        if part in (b"", b"."):
            continue
        if part == b"..":
            if parts and parts[-1] != b"..":
                parts.pop()
            elif not rooted:
                parts.append(part)
            continue
        parts.append(part)
    body = b"/".join(parts)
    if rooted:
        return b"/" + body
    return body or b"."


def join(*elems: bytes) -> bytes:
    """The elements joined by ``/`` and cleaned, empty ones left out (Go's
    ``filepath.Join``); all empty: empty."""
    kept = [e for e in elems if e]
    return clean(b"/".join(kept)) if kept else b""


def _split(path: bytes) -> tuple[bytes, bytes]:
    i = path.rfind(b"/")
    return path[:i + 1], path[i + 1:]


def _clean_glob_path(path: bytes) -> bytes:
    if not path:
        return b"."
    if path == b"/":
        return path
    return path[:-1]  # (the trailing separator)


def _glob_dir(directory: bytes, pattern: bytes, matches: list[bytes],
              raise_error: Callable[[OSError], bool] | None) -> None:
    """The entries of ``directory`` matching ``pattern``, added to
    ``matches`` (Go's unexported ``glob``): a directory that cannot be
    looked at or read adds nothing (unless ``raise_error`` says its error
    is to be raised)."""
    try:
        if not stat.S_ISDIR(os.stat(directory).st_mode):
            return
        names = os.listdir(directory)
    except OSError as e:
        if raise_error is not None and raise_error(e):
            raise
        return
    for name in sorted(names):
        if match(pattern, name):
            matches.append(join(directory, name))


def glob(pattern: bytes, *, raise_error: Callable[[OSError], bool] | None = None) -> list[bytes]:
    """The paths matching ``pattern`` (Go's ``filepath.Glob``), in Go's
    order; :class:`BadPattern` for a syntax error the matching meets.
    ``raise_error`` picks the I/O errors to raise rather than ignore, as
    Go ignores them all (a caller's choice, not Go's)."""
    files: list[bytes] = []  # the last element of each level, outermost first
    depth = 0
    while True:
        if depth == _DEPTH_LIMIT:
            raise BadPattern()
        match(pattern, b"")  # (the pattern's syntax, as far as it is read)
        if not has_meta(pattern):
            try:
                os.lstat(pattern)
            except OSError as e:
                if raise_error is not None and raise_error(e):
                    raise
                found: list[bytes] = []
            else:
                found = [pattern]
            break
        directory, file = _split(pattern)
        directory = _clean_glob_path(directory)
        if not has_meta(directory):
            found = []
            _glob_dir(directory, file, found, raise_error)
            break
        if directory == pattern:
            raise BadPattern()
        files.append(file)
        pattern = directory
        depth += 1
    for file in reversed(files):
        outer: list[bytes] = []
        for d in found:
            _glob_dir(d, file, outer, raise_error)
        found = outer
    return found

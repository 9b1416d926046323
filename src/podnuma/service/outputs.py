"""The files a command writes as a scenario (``--as-scenario FILE``), for
every door that writes them: none of them may be an input, and the files
beside FILE it writes (``FILE.shape-K``: another node shape's scenario)
are written, and those of an earlier run it no longer writes removed, all
or none (:func:`~podnuma.fileio.publish_files`).

An output is never an input
    :func:`check_not_inputs` refuses an output that is one of the files
    read: a file the command line names (standard input redirected from
    it too), or one an input names and the command reads (a scenario's
    ``kubeletConfigFile``: :func:`files_named`, read before any work).

The shape files of an earlier run
    With FILE's shape files goes a record, ``.FILE.shapes`` beside it
    (hidden; :func:`record_path`), listing each shape file written and
    the SHA-256 of its content. A later run into FILE that writes fewer
    shape files removes an earlier ``FILE.shape-K`` it no longer writes
    only when the record of FILE lists it and its content is still the
    content recorded: a file podnuma wrote for FILE, unchanged since. Any
    other file of such a name (a user's, one edited since, one written
    before records were kept) is left as it is. The removals are part of
    the publish: a failure puts the removed files back with the rest.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import PurePath

from podnuma.errors import InputError
from podnuma.inputs.text import TextInput

__all__ = [
    "check_not_inputs",
    "check_scenario_not_input",
    "files_named",
    "record_path",
    "scenario_files",
    "shape_path",
]

#: the first line of a record: a file whose first line is another is not one
_RECORD_HEAD = b"# podnuma --as-scenario: the other node shapes' scenarios written with "
#: a record lists a few files: a larger file is not one
_RECORD_MAX = 1 << 20
#: a shape file as large as a scenario may be (the inputs' limit)
_SHAPE_MAX = 64 << 20


def shape_path(path: str, k: int) -> str:
    """Where the scenario of the ``k``-th other node shape goes, beside
    ``path``: ``replay.yaml`` -> ``replay.shape-1.yaml``."""
    p = PurePath(path)
    return str(p.with_name(f"{p.stem}.shape-{k}{p.suffix}")) if p.suffix else f"{path}.shape-{k}"


def record_path(path: str) -> str:
    """The record of the shape files written with ``path``, beside it:
    ``replay.yaml`` -> ``.replay.yaml.shapes`` (a name as long as the
    first shape file's)."""
    p = PurePath(path)
    return str(p.with_name(f".{p.name}.shapes"))


def _shape_pattern(path: str) -> re.Pattern[str]:
    p = PurePath(path)
    stem, suffix = (p.stem, p.suffix) if p.suffix else (p.name, "")
    return re.compile(re.escape(stem) + r"\.shape-([1-9][0-9]{0,17})" + re.escape(suffix))


def identity(path: str) -> tuple[int, int] | None:
    """The ``(st_dev, st_ino)`` of the regular file at ``path`` (``-``:
    standard input's, when it is a file), or ``None``."""
    try:
        st = os.fstat(0) if path == "-" else os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _input_named(out: str, inputs: Sequence[str | None], read: Mapping[tuple[int, int], str]) -> str | None:
    """The input that is the file at ``out`` (the same device and inode,
    or, with nothing at ``out`` yet, the same path once resolved), or the
    name of the file read (``read``) that it is, or ``None``."""
    mine = identity(out)
    for given in inputs:
        if given is None:
            continue
        if mine is not None and identity(given) == mine:
            return "standard input (-)" if given == "-" else given
        if mine is None and given != "-" and os.path.realpath(given) == os.path.realpath(out):
            return given
    return read.get(mine) if mine is not None else None


def check_not_inputs(outputs: Sequence[str], inputs: Sequence[str | None],
                     read: Mapping[tuple[int, int], str] | None = None, *, option: str = "--as-scenario") -> None:
    """``InputError`` (at the output, as ``option`` words it) naming the
    first of ``outputs`` that is one of the files ``inputs`` names or one
    of the files ``read`` (by identity: :func:`files_named`, or what
    :func:`~podnuma.inputs.documents.files_read` recorded), and that
    input: an output never replaces an input."""
    for out in outputs:
        given = _input_named(out, inputs, read or {})
        if given is not None:
            raise InputError(f"{option}: cannot write: it is the input file {given} (an output never "
                             "replaces an input: write the scenario elsewhere)", file=out)


def check_scenario_not_input(path: str, inputs: Sequence[str | None],
                             read: Mapping[tuple[int, int], str] | None = None,
                             *, option: str = "--as-scenario") -> None:
    """:func:`check_not_inputs` of the scenario at ``path``, of its record
    and of every other node shape's file beside it (``replay.shape-K.yaml``,
    whatever K: their count is known only once the search is done): those
    there now, and any input named like one in the same directory."""
    outputs = [path, record_path(path)]
    shaped = _shape_pattern(path)
    directory = os.path.dirname(path) or "."
    with contextlib.suppress(OSError):
        outputs += [shape_path(path, int(m.group(1))) for m in map(shaped.fullmatch, os.listdir(directory))
                    if m is not None]
    for given in inputs:
        if given is None or given == "-":
            continue
        m = shaped.fullmatch(os.path.basename(given))
        if m is None:
            continue
        with contextlib.suppress(OSError):
            if os.path.samefile(os.path.dirname(given) or ".", directory):
                outputs.append(shape_path(path, int(m.group(1))))
    check_not_inputs(list(dict.fromkeys(outputs)), inputs, read, option=option)


def files_named(node: TextInput | None, config: TextInput | None) -> dict[tuple[int, int], str]:
    """The regular files the inputs ``node`` and ``config`` (already read)
    name and the command will read (a scenario's ``kubeletConfigFile``,
    ...), by ``(st_dev, st_ino)``, with the name each is read by: read now,
    before any work, as the command reads them. What cannot be read, or
    an input that is wrong, is left for the command to say as it says it:
    the files read until then are still recorded."""
    from podnuma.inputs.documents import files_read
    from podnuma.inputs.pods import config_source, load_node_text

    with files_read() as read:
        if node is not None:
            with contextlib.suppress(InputError, OSError, ValueError):
                load_node_text(node)
        if config is not None:
            with contextlib.suppress(InputError, OSError, ValueError):
                config_source(config)
    return dict(read)


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _read_own(path: str, limit: int) -> tuple[bytes, tuple[int, int]] | None:
    """The bytes and identity of the regular file at ``path`` (never
    through a link), or ``None``: not one, missing, past ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return (b"".join(chunks), (st.st_dev, st.st_ino)) if size <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _recorded(path: str) -> tuple[dict[int, str], tuple[int, int] | None]:
    """The shape files (K -> SHA-256) the record beside ``path`` lists,
    and its identity (``None``: no record there, or a file that is not one)."""
    got = _read_own(record_path(path), _RECORD_MAX)
    if got is None or not got[0].startswith(_RECORD_HEAD):
        return {}, None
    listed: dict[int, str] = {}
    for line in got[0].splitlines()[1:]:
        m = re.fullmatch(rb"([0-9a-f]{64}) ([1-9][0-9]{0,17})", line)
        if m is not None:
            listed[int(m.group(2))] = m.group(1).decode("ascii")
    return listed, got[1]


def scenario_files(path: str, contents: Sequence[bytes]) -> tuple[
        list[tuple[str, bytes]], list[tuple[str, tuple[int, int]]]]:
    """What to publish for a scenario at ``path``: the files to write
    (``contents[0]`` at ``path``, ``contents[k]`` at the ``k``-th other
    node shape's file, and their record when there is any) and the files
    to remove with their identity (the earlier run's shape files this one
    no longer writes, when they are podnuma's, unchanged: see the module's
    rule; the record itself when no shape file is written now)."""
    writes = [(path, contents[0])] + [(shape_path(path, k), c) for k, c in enumerate(contents[1:], start=1)]
    listed, record = _recorded(path)
    removals: list[tuple[str, tuple[int, int]]] = []
    for k, digest in sorted(listed.items()):
        if k < len(contents):
            continue  # (written again)
        got = _read_own(shape_path(path, k), _SHAPE_MAX)
        if got is not None and _digest(got[0]) == digest:
            removals.append((shape_path(path, k), got[1]))
    if len(contents) > 1:
        name = os.path.basename(path).encode("utf-8", "surrogateescape").replace(b"\n", b"?")
        lines = [_RECORD_HEAD + name] + [f"{_digest(c)} {k}".encode("ascii")
                                         for k, c in enumerate(contents[1:], start=1)]
        writes.append((record_path(path), b"\n".join(lines) + b"\n"))
    elif record is not None:
        removals.append((record_path(path), record))
    return writes, removals

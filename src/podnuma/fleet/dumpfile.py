"""A pods dump's identity, and its reading as one version.

A dump may be written again while the fleet is read (a ``kubectl get pods
-o json > pods.json`` run again meanwhile). Its index and the bytes its
ranges are read back from must be of one version: each reading of a dump
takes the status of the descriptor it reads from before and after, and
keeps the file's identity (:func:`file_ident`) in the name of the file the
index's ranges give (:class:`DumpName`); whoever reads a range back
(:mod:`podnuma.fleet.podscan`, :mod:`podnuma.fleet.pods`) compares it with
the file's and says :data:`CHANGED` rather than read another version's
bytes as the index's pods. Below both of those modules, which use it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

try:  # hashlib's own blake2b, without hashlib's OpenSSL bindings (2-3 ms of start-up)
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b as _blake2b

from podnuma.errors import InputError
from podnuma.inputs.documents import PastLimit, open_input, read_failure, read_open, wait_for_writer
from podnuma.inputs.limits import FLEET_LIMITS

__all__ = ["CHANGED", "READ_TRIES", "DumpChanged", "DumpName", "file_ident", "ident_of", "read_dump"]


def ident_of(size: int, mtime_ns: int, ino: int) -> int:
    """The identity (:func:`file_ident`) of a file of this size, modification
    time and inode."""
    return int.from_bytes(_blake2b(b"%d %d %d" % (size, mtime_ns, ino), digest_size=8).digest(),
                          "big", signed=True)


def file_ident(st: os.stat_result) -> int:
    """A dump's identity as its status ``st`` gives it: its size,
    modification time and inode, as one number of 8 bytes (a digest: the
    same in every process and on every platform that reads the dump; only
    whether two are equal matters). A dump written again in place changes
    its modification time, one replaced (``mv``) its inode, one cut short
    or grown its size. A rewrite that sets the modification time back
    (``touch -r``, ``rsync --inplace -t``), or lands within the same tick of
    the kernel's clock (a few milliseconds) as the write before it, keeps
    it: nothing short of reading the bytes again would tell, which the
    fleet's reading does not do (one pass over the bytes)."""
    return ident_of(st.st_size, st.st_mtime_ns, st.st_ino)


class DumpName(str):
    """A pods dump's name (its path, as ``str``: it compares, hashes and
    sorts as the path, and goes wherever a range's file goes) that carries
    the dump's identity (:func:`file_ident`) as its index read it: the
    ranges the index gives name their file so (and a node's ``pod_files``
    the dumps the general reader read), and the reading back of a range
    (:func:`read_ranges`, in whichever process replays its node) refuses
    a file that is not that one any more. The ranges of one index share
    one name, so a pickle of nodes (a partition sent to a worker) holds
    the identity once per file (about 16 bytes; the class's name, about
    35, once per pickle)."""

    ident: int

    def __new__(cls, path: str, ident: int) -> DumpName:
        self = super().__new__(cls, path)
        self.ident = ident
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return DumpName, (str(self), self.ident)


#: the message of a range whose dump is not the one indexed
CHANGED = ("changed since it was indexed (written again during the run): this node's pods in it are not "
           "read")
#: how many times a whole dump is read when it changes while it is read
READ_TRIES = 3


class DumpChanged(InputError):
    """A dump that changed while it was read, every time it was read
    (:func:`read_dump`)."""


def read_dump(path: Path, name: str) -> tuple[bytes, int | None]:
    """The bytes of the file at ``path`` (``name``), read as
    :func:`podnuma.inputs.documents.read_bytes` reads a file (the fleet's
    size limit, a named pipe waited on for a writer), with the identity
    (:func:`file_ident`) the file had all the while it was read: its
    descriptor's status taken before and after the read, and equal
    (``None`` for a file that is not a regular one: no identity, and no
    range of it is read back). A file whose identity changed while it was
    read (written again meanwhile: the bytes may be of two versions) is
    read again, up to :data:`READ_TRIES` times; then :class:`DumpChanged`.
    ``InputError`` when it cannot be read."""
    limit = FLEET_LIMITS.max_bytes
    for _ in range(READ_TRIES):
        with open_input(path, what="input", name=name) as fh:
            fd = fh.fileno()
            before = os.fstat(fd)
            try:
                first = wait_for_writer(fh, what="input", name=name)
                data = first + read_open(fh, limit - len(first))
                after = os.fstat(fd)
            except PastLimit:
                raise InputError(f"input file is larger than the limit of {limit} bytes", file=name) from None
            except OSError as e:
                raise read_failure(e, what="input", name=name) from None
        if len(data) > limit:
            raise InputError(f"input file is larger than the limit of {limit} bytes", file=name)
        if not stat.S_ISREG(before.st_mode):
            return data, None
        ident = file_ident(after)
        if ident == file_ident(before):
            return data, ident
    raise DumpChanged(f"changed while it was read ({READ_TRIES} times in a row): not read "
                      "(run again on a dump that is not being written)", file=name)

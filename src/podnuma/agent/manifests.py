"""Static-pod manifests, read as the kubelet's file source reads them.

Mirrors ``pkg/kubelet/config/file.go`` and ``common.go``:

* the directory's entries matching ``[^.]*`` (hidden files are ignored),
  sorted by name; sub-directories and non-regular files are skipped;
* a file holds one pod (YAML or JSON), at most 10 MiB, read through the one
  bounded reading path (:mod:`podnuma.inputs.documents`, with
  :data:`~podnuma.inputs.limits.MANIFEST_LIMITS`: YAML aliases, nesting and
  values bounded, YAML 1.1 scalars as the kubelet's go-yaml reads them);
* the pod is decoded as the file source decodes it, not as the API server
  creates it (:mod:`podnuma.agent.staticpod`: lenient fields, a repeated
  key's last value, ``apiVersion``/``kind`` required, v1 defaults without
  the registry's pod-level defaulting, the kubelet's ``ValidatePodCreate``
  on the fields :mod:`podnuma.agent.validation` lists, no reference to
  secrets, config maps, service accounts...);
* the pod's name gets the node name appended (``NAME-NODE``, lower case),
  its namespace defaults to ``default``;
* without ``metadata.uid`` the UID is a hash of the decoded, defaulted pod,
  the node name and the file path (the canonical one: the agent resolves
  its manifests directory, so any spelling of the same directory gives the
  same UIDs), so it changes when the kubelet's would: not for an edit that
  only writes out a default or an unknown field (the kubelet hashes the
  decoded object with FNV-128a; podnuma hashes a canonical JSON form with
  BLAKE2b: the same 32 hex digits, not the same value; what the canonical
  form does not model is listed in :mod:`podnuma.agent.staticpod`).

A malformed file raises :class:`~podnuma.errors.InputError` naming the file
and the field path (with its line when known).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from podnuma.agent.fds import descriptors_exhausted
from podnuma.agent.staticpod import decode_static_pod
from podnuma.api.pod import Pod
from podnuma.api.pod_manifest import FeatureGateView
from podnuma.errors import InputError
from podnuma.inputs.documents import (
    decode_text,
    read_failure,
    read_within,
)
from podnuma.inputs.limits import MANIFEST_LIMITS

__all__ = [
    "MAX_MANIFEST_BYTES",
    "Manifest",
    "ManifestsUnreachable",
    "list_manifest_files",
    "parse_manifest",
    "read_manifest",
    "read_manifest_bytes",
]

MAX_MANIFEST_BYTES = MANIFEST_LIMITS.max_bytes


@dataclass(frozen=True)
class Manifest:
    """A static pod: the file it came from and the pod as the node sees it."""

    file: str
    pod: Pod
    digest: str  # of the pod as written: a change of content is a new pod


class ManifestsUnreachable(Exception):
    """The manifests directory cannot be looked at (its ``stat`` fails, but
    not because it is gone) or is no longer a directory: the kubelet's file
    source logs the error and sends no update, so the static pods stay as
    they are (``listConfig`` in ``file.go``)."""


def list_manifest_files(directory: Path) -> list[Path]:
    """The files the kubelet would read, in its order.

    As ``listConfig``: a directory that does not exist lists nothing (the
    kubelet sends an empty update: every static pod goes). One whose
    ``stat`` fails otherwise (a directory on the way that cannot be
    searched), or that is not a directory any more, raises
    :class:`ManifestsUnreachable` (no update: the pods stay). Upstream
    quirk: the entries come from ``filepath.Glob``, which ignores an error
    reading the directory, so one that exists but cannot be read (mode
    000) lists nothing and every static pod goes, as for a missing one.
    Running out of file descriptors raises ``OSError`` (the sync is tried
    again)."""
    out: list[Path] = []
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        return out
    except OSError as e:
        if descriptors_exhausted(e):
            raise
        raise ManifestsUnreachable(f"{directory}: cannot look at it: {e.strerror or e}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ManifestsUnreachable(f"{directory}: not a directory any more")
    try:
        entries = sorted(os.listdir(directory))
    except FileNotFoundError:
        return out
    except OSError as e:
        if descriptors_exhausted(e):
            raise
        return out  # (Glob's quirk: the error is ignored)
    for name in entries:
        if name.startswith("."):
            continue
        path = directory / name
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # gone meanwhile
        if stat.S_ISREG(mode):
            out.append(path)
    return out


def read_manifest_bytes(path: Path) -> bytes:
    """The bytes of the manifest at ``path``, at most the limit, read anew
    (as the kubelet's file source reads each file every time);
    ``InputError`` when it cannot be read (not a regular file, too large,
    gone...). Running out of file descriptors is not the file's fault: that
    ``OSError`` (``EMFILE``, ``ENFILE``) is raised as it is, for the caller
    to try again later."""
    name = str(path)
    try:
        # (listed as a regular file, it may have been replaced since by a
        # pipe whose writer never writes: opened without waiting, what was
        # opened is looked at before anything is read)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError("manifest file not found", file=name) from None
    except OSError as e:
        if descriptors_exhausted(e):
            raise
        raise read_failure(e, what="manifest", name=name) from None
    try:
        # (looked at on the descriptor, before a file object is made of it:
        # Python refuses to make one of a directory, which the name may be
        # by now)
        mode = os.fstat(fd).st_mode
    except OSError as e:
        os.close(fd)
        raise read_failure(e, what="manifest", name=name) from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise InputError("manifest file is a directory", file=name)
        raise InputError("not a regular file", file=name)
    with os.fdopen(fd, "rb") as fh:
        try:
            return read_within(fh, MANIFEST_LIMITS.max_bytes, name)
        except OSError as e:
            if descriptors_exhausted(e):
                raise
            raise read_failure(e, what="manifest", name=name) from None


def read_manifest(path: Path, *, node_name: str, gates: FeatureGateView) -> Manifest:
    """The manifest at ``path`` read (:func:`read_manifest_bytes`) and
    parsed (:func:`parse_manifest`)."""
    return parse_manifest(read_manifest_bytes(path), path, node_name=node_name, gates=gates)


def parse_manifest(raw: bytes, path: Path, *, node_name: str, gates: FeatureGateView) -> Manifest:
    """The pod of the manifest ``raw`` read from ``path``, decoded as the
    kubelet's file source decodes it (:mod:`podnuma.agent.staticpod`);
    ``InputError`` naming the file (and the field) when the kubelet would
    refuse it."""
    name = str(path)
    try:
        text = decode_text(raw, what="manifest", name=name)
    except InputError:
        text = _not_utf8(raw, name)
    got = decode_static_pod(text, name=name, node_name=node_name, gates=gates)
    return Manifest(file=name, pod=got.pod, digest=got.digest)


#: the surrogates Python's ``surrogateescape`` stands an undecodable byte for
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _not_utf8(raw: bytes, name: str) -> str:
    """The text of a manifest that is not UTF-8, as the kubelet reads it:
    JSON (it starts with ``{``, after white space) is read by Go's decoder,
    which takes each byte that is not part of a UTF-8 character as U+FFFD
    (``utf8.DecodeRune``: one byte at a time); YAML by go-yaml's reader,
    which refuses it (``readerc.go``: ``yaml: invalid leading UTF-8 octet``,
    ``invalid trailing UTF-8 octet``, ``incomplete UTF-8 octet sequence``,
    ``invalid length of a UTF-8 sequence``, ``invalid Unicode
    character``; the first such byte; podnuma does not model a syntax error
    before it winning)."""
    escaped = raw.decode("utf-8", "surrogateescape")
    if raw.lstrip(b" \t\r\n").startswith(b"{"):
        return _ESCAPED_BYTE.sub("\ufffd", escaped)
    at = _ESCAPED_BYTE.search(escaped)
    first = len(escaped[:at.start()].encode()) if at is not None else 0
    raise InputError(f"couldn't parse as pod(yaml: {_go_yaml_utf8(raw, first)}), please check config file",
                     file=name)


def _go_yaml_utf8(raw: bytes, at: int) -> str:
    """go-yaml's refusal of the UTF-8 sequence starting at byte ``at``
    (``yaml_parser_update_buffer``: its width from the leading octet, then
    each trailing octet, then the width against the value, then the
    value)."""
    lead = raw[at]
    width = 2 if lead & 0xE0 == 0xC0 else 3 if lead & 0xF0 == 0xE0 else 4 if lead & 0xF8 == 0xF0 else 0
    if width == 0:
        return "invalid leading UTF-8 octet"
    if at + width > len(raw):
        return "incomplete UTF-8 octet sequence"
    value = lead & (0x1F, 0x0F, 0x07)[width - 2]
    for octet in raw[at + 1:at + width]:
        if octet & 0xC0 != 0x80:
            return "invalid trailing UTF-8 octet"
        value = (value << 6) | (octet & 0x3F)
    if value < (0x80, 0x800, 0x10000)[width - 2]:
        return "invalid length of a UTF-8 sequence"
    return "invalid Unicode character"  # (a surrogate, or past U+10FFFF)

"""Static-pod manifests, read as the kubelet's file source reads them.

Mirrors ``pkg/kubelet/config/file.go`` and ``common.go``:

* the static-pod path is a directory, whose entries matching ``[^.]*``
  are read (hidden files are ignored; the directory's name is part of
  the glob pattern, as upstream), sorted in byte order; sub-directories
  and non-regular files are skipped; or one regular file; or missing (no
  pods);
* a file holds one pod (YAML or JSON), less than 10 MiB (a file of 10 MiB
  is refused: ``the read limit is reached``), read through the one
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

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from podnuma.agent.staticpod import GO_SPACE, decode_static_pod
from podnuma.api.pod import Pod
from podnuma.api.pod_manifest import FeatureGateView
from podnuma.errors import InputError
from podnuma.fds import descriptors_exhausted
from podnuma.golang import filepath as gofilepath
from podnuma.inputs.documents import read_failure, read_within
from podnuma.inputs.goyaml import events
from podnuma.inputs.limits import MANIFEST_LIMITS

__all__ = [
    "MAX_MANIFEST_BYTES",
    "READ_LIMIT_REACHED",
    "Manifest",
    "ManifestListing",
    "ManifestsUnreachable",
    "list_manifest_files",
    "list_manifests",
    "parse_manifest",
    "read_manifest",
    "read_manifest_bytes",
]

MAX_MANIFEST_BYTES = MANIFEST_LIMITS.max_bytes

#: k8s.io/utils ``io.ErrLimitReached``: a manifest of :data:`MAX_MANIFEST_BYTES`
#: bytes or more (``ReadAtMost`` fails once it has read the limit)
READ_LIMIT_REACHED = "the read limit is reached"


@dataclass(frozen=True)
class Manifest:
    """A static pod: the file it came from and the pod as the node sees it."""

    file: str
    pod: Pod
    digest: str  # of the pod as written: a change of content is a new pod


class ManifestsUnreachable(Exception):
    """The static-pod path cannot be used as it is: its ``stat`` fails (but
    not because it is gone), it is neither a directory nor a regular file,
    its name is no valid pattern for ``filepath.Glob``, or (one file) the
    file is refused: the kubelet's file source logs the error and sends no
    update, so the static pods stay as they are (``listConfig`` in
    ``file.go``)."""


@dataclass(frozen=True)
class ManifestListing:
    """What the static-pod path holds, as ``listConfig`` sees it.

    ``files``: the manifests to read, in the kubelet's order; ``single``:
    the path is one regular file (``extractFromFile`` on it: the source's
    whole set is its pod, and a refused file changes nothing);
    ``missing``: the path does not exist (an empty set: every static pod
    goes)."""

    files: list[Path]
    single: bool = False
    missing: bool = False


def list_manifests(path: Path | str) -> ManifestListing:
    """The manifests the kubelet reads from its static-pod path ``path``.

    As ``NewSourceFile`` and ``listConfig``: trailing separators dropped,
    the path looked at with ``stat``; one that does not exist
    (``ENOENT``) lists nothing, ``missing``. A regular file is the one
    manifest (``single``). A directory is listed as the kubelet lists it:
    ``filepath.Glob(filepath.Join(path, "[^.]*"))``, the directory's own
    name part of the pattern (:mod:`podnuma.golang.filepath`: ``man[1]``
    lists the files of ``man1``, ``\\`` escapes), the results sorted
    in byte order (``sort.Strings``), each looked at again with ``stat``:
    sub-directories, other kinds and names gone meanwhile skipped. A
    ``stat`` failing otherwise, a path of another kind or a name that is
    no valid pattern (``glob failed: syntax error in pattern``) raises
    :class:`ManifestsUnreachable`. Upstream quirk: ``filepath.Glob``
    ignores an error reading a directory, so one that exists but cannot
    be read (mode 000) lists nothing and every static pod goes, as for a
    missing one. Running out of file descriptors raises ``OSError`` (the
    sync is tried again), where Go would ignore it."""
    given = os.fsencode(path).rstrip(b"/")
    shown = os.fsdecode(given) or os.fsdecode(path)
    try:
        st = os.stat(given)
    except FileNotFoundError:
        return ManifestListing([], missing=True)
    except OSError as e:
        if descriptors_exhausted(e):
            raise
        raise ManifestsUnreachable(f"{shown}: cannot look at it: {e.strerror or e}") from None
    if stat.S_ISREG(st.st_mode):
        return ManifestListing([Path(os.fsdecode(given))], single=True)
    if not stat.S_ISDIR(st.st_mode):
        raise ManifestsUnreachable(f"{shown}: path is not a directory or file")
    try:
        names = gofilepath.glob(gofilepath.join(given, b"[^.]*"), raise_error=descriptors_exhausted)
    except gofilepath.BadPattern as e:
        raise ManifestsUnreachable(f"{shown}: glob failed: {e}") from None
    out: list[Path] = []
    for name in sorted(names):
        try:
            mode = os.stat(name).st_mode
        except OSError:
            continue  # gone meanwhile
        if stat.S_ISREG(mode):
            out.append(Path(os.fsdecode(name)))
    return ManifestListing(out)


def list_manifest_files(directory: Path | str) -> list[Path]:
    """The files the kubelet would read from ``directory``, in its order
    (:func:`list_manifests`)."""
    return list_manifests(directory).files


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
            # (``utilio.ReadAtMost``: the limit reached is an error, so a
            # file of exactly 10 MiB is refused as a larger one is)
            return read_within(fh, MANIFEST_LIMITS.max_bytes - 1, name)
        except OSError as e:
            if descriptors_exhausted(e):
                raise
            if e.errno == errno.EFBIG:
                raise InputError(READ_LIMIT_REACHED, file=name) from None
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
    if go_json_prefix(raw):
        # (JSON: Go's decoder reads a byte that is no UTF-8 as U+FFFD)
        text = _ESCAPED_BYTE.sub("\ufffd", raw.decode("utf-8", "surrogateescape"))
        got = decode_static_pod(text, name=name, node_name=node_name, gates=gates, is_json=True, raw=raw)
    else:
        got = decode_static_pod(_go_yaml_text(raw, name), name=name, node_name=node_name, gates=gates,
                                is_json=False)
    return Manifest(file=name, pod=got.pod, digest=got.digest)


#: the surrogates Python's ``surrogateescape`` stands an undecodable byte for
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")

#: the white space Go's ``unicode.IsSpace`` knows, as UTF-8, which
#: apimachinery's ``hasJSONPrefix`` (``pkg/util/yaml/decoder.go``) skips
#: before looking for ``{``
_GO_SPACE_BYTES = re.compile(b"(?:" + b"|".join(re.escape(c.encode()) for c in GO_SPACE) + b")*")


def go_json_prefix(raw: bytes) -> bool:
    """Whether the kubelet reads ``raw`` as JSON (``utilyaml.ToJSON``:
    ``{`` after what ``bytes.TrimLeftFunc(unicode.IsSpace)`` trims, which
    stops at a byte that is no UTF-8)."""
    m = _GO_SPACE_BYTES.match(raw)
    return raw[m.end() if m else 0:].startswith(b"{")


#: the characters go-yaml's reader refuses (``readerc.go``: ``control
#: characters are not allowed``)
_GO_YAML_FORBIDDEN = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

#: go-yaml's raw buffer (``input_raw_buffer_size``): it reads so many bytes
#: at a time and decodes all of them
_GO_YAML_RAW = 512


def _go_yaml_text(raw: bytes, name: str) -> str:
    """The text go-yaml's reader gives its scanner (``readerc.go``): UTF-8,
    or UTF-16 after its byte order mark, the mark dropped. A byte that is
    no character in that encoding, or a character go-yaml does not allow
    (``\\x01``...), refuses the file in go-yaml's words
    (``yaml: invalid leading UTF-8 octet``, ``yaml: control characters are
    not allowed``...) when the reader decodes it: it decodes 512 bytes at a
    time, all of them, when the scanner needs a character it has not
    decoded yet; ``Unmarshal`` scans no further than the first document's
    end (the next token, and the four characters the scanner looks at
    there). A bad character past the read that ends the first document is
    not looked at: the text returned then stops before that read."""
    if raw.startswith(b"\xff\xfe"):
        enc, bom = "utf-16-le", 2
    elif raw.startswith(b"\xfe\xff"):
        enc, bom = "utf-16-be", 2
    else:
        enc, bom = "utf-8", 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    body = raw[bom:]
    bad: int | None = None
    why = ""
    if enc == "utf-8":
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as e:
            text = body[:e.start].decode("utf-8")
            bad, why = e.start, _go_yaml_utf8(body, e.start)
    else:
        text, bad, why = _utf16(body, enc)
    m = _GO_YAML_FORBIDDEN.search(text)
    if m is not None:
        at = len(text[:m.start()].encode(enc, "surrogatepass"))
        if bad is None or at < bad:
            bad, why = at, "control characters are not allowed"
    if bad is None:
        return text
    seen = _decoded_before(body, bad, enc, bom)
    prefix = text[:len(body[:seen].decode(enc, "surrogatepass"))]
    if _first_document_within(prefix):
        return prefix
    raise InputError(f"couldn't parse as pod(yaml: {why}), please check config file", file=name)


def _utf16(body: bytes, enc: str) -> tuple[str, int | None, str]:
    """The text of UTF-16 ``body`` up to the first code unit go-yaml
    refuses, its byte offset and go-yaml's words (``readerc.go``)."""
    whole = len(body) // 2 * 2
    text = body[:whole].decode(enc, "surrogatepass")  # (a pair is one character, a lone half stays)
    m = _LONE_SURROGATE.search(text)
    if m is not None:
        at = len(text[:m.start()].encode(enc, "surrogatepass"))
        why = "unexpected low surrogate area" if m.group() >= "\udc00" else \
            "incomplete UTF-16 surrogate pair" if at + 2 >= len(body) else "expected low surrogate area"
        return text[:m.start()], at, why
    if whole < len(body):
        return text, whole, "incomplete UTF-16 character"
    return text, None, ""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _width(body: bytes, at: int, enc: str) -> int:
    """The bytes of the character starting at ``at`` as go-yaml's reader
    sizes it (0: a leading UTF-8 octet it refuses at once)."""
    if enc == "utf-8":
        lead = body[at]
        return 1 if lead < 0x80 else 2 if lead & 0xE0 == 0xC0 else 3 if lead & 0xF0 == 0xE0 else \
            4 if lead & 0xF8 == 0xF0 else 0
    if at + 2 > len(body):
        return 2
    unit = body[at:at + 2]
    hi = unit[1] if enc.endswith("le") else unit[0]
    return 4 if hi & 0xFC == 0xD8 else 2


def _decoded_before(body: bytes, bad: int, enc: str, bom: int) -> int:
    """The bytes of ``body`` go-yaml's reader has decoded before the read
    whose decoding meets the bad character at ``bad`` (``readerc.go``
    ``yaml_parser_update_buffer``: each read fills the raw buffer to 512
    bytes, the first one holding the byte order mark; all of it is
    decoded but an incomplete character at its end, kept for the next
    read; at the end of the file that one is refused)."""
    n = len(body)
    start, end = 0, min(_GO_YAML_RAW - bom, n)
    while True:
        if bad < end:
            w = _width(body, bad, enc)
            return bad if w and bad + w > end else start
        done = end
        if enc == "utf-8":
            for at in range(end - 1, max(start, end - 4) - 1, -1):
                if body[at] & 0xC0 != 0x80:
                    done = at if at + _width(body, at, enc) > end else end
                    break
        else:
            done = start + (end - start) // 2 * 2
            if done - 2 >= start and _width(body, done - 2, enc) == 4:
                done -= 2
        if end == n:
            return done
        start = done
        end = min(n, end + _GO_YAML_RAW - (end - done))


def _first_document_within(text: str) -> bool:
    """Whether go-yaml's scanner, given ``text`` (the characters decoded
    before a bad one), ends the first document without needing a character
    past it: the token after the document and the four characters it
    looks at there (``yaml_parser_fetch_next_token``), or a syntax error
    met before (reported then as the parser words it)."""
    try:
        for ev in events(text, c_parser=False):  # (PyYAML's own parser: its marks count characters)
            if isinstance(ev, yaml.DocumentEndEvent):
                end: Any = ev.start_mark
                return bool(end.index + 4 <= len(text))
    except yaml.MarkedYAMLError as e:
        mark: Any = e.problem_mark or e.context_mark
        return mark is not None and mark.index + 4 <= len(text)
    return False


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

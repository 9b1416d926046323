"""Static-pod manifests, read as the kubelet's file source reads them.

Mirrors ``pkg/kubelet/config/file.go`` and ``common.go``:

* the directory's entries matching ``[^.]*`` (hidden files are ignored),
  sorted by name; sub-directories and non-regular files are skipped;
* a file holds one pod (YAML or JSON), at most 10 MiB;
* the pod's name gets the node name appended (``NAME-NODE``, lower case),
  its namespace defaults to ``default``;
* without ``metadata.uid`` the UID is a hash of the pod, the node name and
  the file path, so it changes exactly when the file's pod changes (the
  kubelet hashes the decoded object with FNV-128a; podnuma hashes a
  canonical JSON form with BLAKE2b: the same 32 hex digits, not the same
  value).

A malformed file raises :class:`~podnuma.errors.InputError` naming the file
and the field path (with its line when known).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from podnuma.api.pod import Pod
from podnuma.api.pod_manifest import FeatureGateView, parse_pod
from podnuma.errors import InputError
from podnuma.inputs.documents import parse_document

__all__ = ["MAX_MANIFEST_BYTES", "Manifest", "list_manifest_files", "read_manifest"]

MAX_MANIFEST_BYTES = 10 << 20


@dataclass(frozen=True)
class Manifest:
    """A static pod: the file it came from and the pod as the node sees it."""

    file: str
    pod: Pod
    digest: str  # of the pod as written: a change of content is a new pod


def list_manifest_files(directory: Path) -> list[Path]:
    """The files the kubelet would read, in its order."""
    out: list[Path] = []
    try:
        entries = sorted(os.listdir(directory))
    except FileNotFoundError:
        return out
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


def _canonical(data: object) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str).encode()


def pod_uid(data: object, *, node_name: str, file: str) -> str:
    """The generated UID of a static pod without ``metadata.uid``."""
    h = hashlib.blake2b(digest_size=16)
    h.update(_canonical(data))
    h.update(f"host:{node_name}".encode())
    h.update(f"file:{file}".encode())
    return h.hexdigest()


def read_manifest(path: Path, *, node_name: str, gates: FeatureGateView) -> Manifest:
    name = str(path)
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as e:
        raise InputError(f"cannot read manifest: {e.strerror or e}", file=name) from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise InputError(f"manifest is larger than {MAX_MANIFEST_BYTES} bytes", file=name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"manifest is not UTF-8 text (byte {e.start})", file=name) from None
    doc = parse_document(text, name=name)
    if doc.data is None:
        raise InputError("the manifest is empty", file=name)
    if not isinstance(doc.data, Mapping):
        raise InputError("the manifest must hold a pod (a mapping)", file=name)
    try:
        pod = parse_pod(doc.data, gates=gates)
    except InputError as e:
        raise doc.enrich(e.in_file(name)) from None
    meta = doc.data.get("metadata")
    explicit_uid = isinstance(meta, Mapping) and bool(meta.get("uid"))
    uid = pod.uid if explicit_uid else pod_uid(doc.data, node_name=node_name, file=name)
    return Manifest(
        file=name,
        pod=replace(pod, uid=uid, name=f"{pod.name}-{node_name.lower()}"),
        digest=hashlib.blake2b(_canonical(doc.data), digest_size=16).hexdigest(),
    )

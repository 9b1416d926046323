"""Shared checkpoint logic of the kubelet's resource managers.

Mirrors ``pkg/kubelet/checkpointmanager/checksum/checksum.go`` (a checksum is
FNV-32a over go-spew's ``%#v`` rendering of the checkpoint struct, see
``k8s.io/apiserver/pkg/util/hash``) and
``pkg/kubelet/checkpointmanager/errors/errors.go`` (the error texts). The Go
behaviours the bytes depend on (``encoding/json``, go-spew, FNV, ``strconv``)
live in :mod:`podnuma.golang`.

Everything here is pure; reading and writing the files is
:mod:`podnuma.fileio` (the edge).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from podnuma.errors import KubeletStartupError
from podnuma.golang.fnv import fnv32a
from podnuma.golang.json import GoJSONError, go_json_parse, go_json_unmarshal, to_json_value
from podnuma.golang.spew import spew_sdump
from podnuma.golang.types import GO_UINT64, GoStruct, GoType

__all__ = [
    "CHECKSUM",
    "CORRUPT_CHECKPOINT",
    "DEFAULT_STATE_DIR",
    "CheckpointError",
    "checkpoint_json",
    "dump_checksum",
    "found_bytes",
    "object_checksum",
    "string_checksum",
    "unmarshal_checkpoint",
]

#: the kubelet's state directory (``--root-dir``), in which the managers'
#: checkpoint files are and its refusals of them name them
DEFAULT_STATE_DIR: Final = "/var/lib/kubelet"

#: ``checksum.Checksum`` (``type Checksum uint64``)
CHECKSUM: Final = GO_UINT64.named("checksum.Checksum")

CORRUPT_CHECKPOINT: Final = "checkpoint is corrupted"


class CheckpointError(KubeletStartupError):
    """A checkpoint the kubelet would refuse to restore.

    The message is the kubelet's own error text (``checkpoint is corrupted``,
    ``could not load v4 checkpoint: ...``, ``unexpected end of JSON input``,
    ``could not parse default CPU set ...``).
    """


# ---------------------------------------------------------------------------
def dump_checksum(dump: str) -> int:
    """FNV-32a over a dump (``fmt.Fprintf(hash, "%v", dump)``)."""
    return fnv32a(dump.encode("utf-8", "surrogatepass"))


def object_checksum(value: Any, typ: GoType) -> int:
    """``checksum.New(v)``: FNV-32a over the spew dump of ``v``."""
    return dump_checksum(spew_sdump(value, typ))


def string_checksum(text: str) -> int:
    """``checksum.New(s)`` for a Go string: FNV-32a of ``"(string)" + s``."""
    return dump_checksum("(string)" + text)


def checkpoint_json(blob: bytes | str | Mapping[str, Any]) -> tuple[Any, str | None]:
    """A checkpoint's JSON value, from the file's bytes (or text) or an
    already decoded object, and the error Go's ``json.Unmarshal`` gives for
    text that is not JSON (``None`` when it is)."""
    try:
        if isinstance(blob, Mapping):
            return to_json_value(blob), None
        return go_json_parse(blob), None
    except GoJSONError as err:
        return None, str(err)


def unmarshal_checkpoint(
    jv: Any, syntax_error: str | None, typ: GoStruct, fresh: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """``UnmarshalCheckpoint`` (``json.Unmarshal`` into a new checkpoint
    struct): the fields decoded over ``fresh`` (the struct as its
    constructor leaves it), and the decoding error. Go checks the whole text
    is JSON before decoding anything, so a syntax error leaves ``fresh``
    untouched."""
    if syntax_error is not None:
        return fresh, syntax_error
    return go_json_unmarshal(jv, typ, fresh)


def found_bytes(blob: bytes | str | Mapping[str, Any]) -> bytes | None:
    """The bytes of a starting checkpoint file as the kubelet finds it: the
    file's own bytes, or an inline object written as compact JSON with
    sorted keys (a mapping carries no key order of its own)."""
    if isinstance(blob, bytes):
        return blob
    if isinstance(blob, str):
        return blob.encode("utf-8", "surrogatepass")
    try:
        return json.dumps(blob, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):
        return None

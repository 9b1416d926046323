"""Checkpoint and output files on disk: the I/O edge of the checkpoint code.

The encodings live in the pure core (``podnuma.cm.checkpoint``,
``podnuma.cm.cpumanager.checkpoint``, ``podnuma.cm.memorymanager.checkpoint``);
this module only reads and writes files. Writes are atomic, as the kubelet's
file store (``pkg/kubelet/util/store/filestore.go``) makes them: a temporary
file in the same directory, fsync, rename.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from podnuma.cm.cpumanager.checkpoint import (
    CPUCheckpointData,
    decode_cpu_checkpoint,
    encode_cpu_checkpoint,
)
from podnuma.cm.memorymanager.checkpoint import (
    MemoryCheckpointData,
    decode_memory_checkpoint,
    encode_memory_checkpoint,
)

__all__ = [
    "atomic_write",
    "read_file",
    "read_cpu_checkpoint_file",
    "write_cpu_checkpoint_file",
    "read_memory_checkpoint_file",
    "write_memory_checkpoint_file",
]


def atomic_write(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new content,
    never a partial file: temporary file in the same directory, fsync, rename
    (as the kubelet's file store does). The file is private (0600, as the
    kubelet's) unless ``mode`` says otherwise."""
    target = Path(path)
    directory = target.parent
    fd, tmp = tempfile.mkstemp(prefix="." + target.name + ".", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def read_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a checkpoint file."""
    return Path(path).read_bytes()


def read_cpu_checkpoint_file(
    path: str | os.PathLike[str], *, pod_level_resource_managers: bool = True
) -> CPUCheckpointData | None:
    """Read and decode a checkpoint file; ``None`` when it does not exist (the
    kubelet then starts from a fresh state and writes one)."""
    try:
        blob = read_file(path)
    except FileNotFoundError:
        return None
    return decode_cpu_checkpoint(blob, pod_level_resource_managers=pod_level_resource_managers)


def write_cpu_checkpoint_file(path: str | os.PathLike[str], data: CPUCheckpointData) -> None:
    """Write the checkpoint atomically."""
    atomic_write(path, encode_cpu_checkpoint(data))


def read_memory_checkpoint_file(
    path: str | os.PathLike[str], *, pod_level_resource_managers: bool = False
) -> MemoryCheckpointData | None:
    """Read and decode a checkpoint file; ``None`` when it does not exist."""
    try:
        blob = read_file(path)
    except FileNotFoundError:
        return None
    return decode_memory_checkpoint(blob, pod_level_resource_managers=pod_level_resource_managers)


def write_memory_checkpoint_file(path: str | os.PathLike[str], data: MemoryCheckpointData) -> None:
    """Write the checkpoint atomically."""
    atomic_write(path, encode_memory_checkpoint(data))

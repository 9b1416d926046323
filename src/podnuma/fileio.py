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
import time
from collections.abc import Mapping
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
from podnuma.errors import InputError

__all__ = [
    "atomic_write",
    "read_file",
    "read_cpu_checkpoint_file",
    "write_cpu_checkpoint_file",
    "read_memory_checkpoint_file",
    "write_memory_checkpoint_file",
    "write_checkpoint_dir",
]

_FAULT_PAUSE = float(os.environ.get("PODNUMA_FAULT_WRITE_PAUSE") or 0)


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
            if _FAULT_PAUSE:
                fh.write(data[: len(data) // 2])
                fh.flush()  # on disk: a torn file
                time.sleep(_FAULT_PAUSE)
                fh.write(data[len(data) // 2 :])
            else:
                fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if _FAULT_PAUSE:
            time.sleep(_FAULT_PAUSE)
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


def _read_if_there(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes of a checkpoint file, ``None`` when it does not exist."""
    try:
        return read_file(path)
    except FileNotFoundError:
        return None


def read_cpu_checkpoint_file(
    path: str | os.PathLike[str], *, pod_level_resource_managers: bool = True
) -> CPUCheckpointData | None:
    """Read and decode a checkpoint file; ``None`` when it does not exist (the
    kubelet then starts from a fresh state and writes one)."""
    blob = _read_if_there(path)
    return None if blob is None else decode_cpu_checkpoint(
        blob, pod_level_resource_managers=pod_level_resource_managers
    )


def write_cpu_checkpoint_file(path: str | os.PathLike[str], data: CPUCheckpointData) -> None:
    """Write the checkpoint atomically."""
    atomic_write(path, encode_cpu_checkpoint(data))


def read_memory_checkpoint_file(
    path: str | os.PathLike[str], *, pod_level_resource_managers: bool = False
) -> MemoryCheckpointData | None:
    """Read and decode a checkpoint file; ``None`` when it does not exist."""
    blob = _read_if_there(path)
    return None if blob is None else decode_memory_checkpoint(
        blob, pod_level_resource_managers=pod_level_resource_managers
    )


def write_memory_checkpoint_file(path: str | os.PathLike[str], data: MemoryCheckpointData) -> None:
    """Write the checkpoint atomically."""
    atomic_write(path, encode_memory_checkpoint(data))




def write_checkpoint_dir(directory: Path, files: Mapping[str, bytes]) -> None:
    """Write every checkpoint file or none: each is staged in a temporary
    file in ``directory`` (written, fsynced), and only when all are staged
    are they renamed over their targets. A failure leaves no temporary file
    and no half-written checkpoint behind."""
    if directory.exists() and not directory.is_dir():
        raise InputError("--checkpoint-dir: not a directory", file=str(directory))
    created = not directory.exists()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--checkpoint-dir: cannot create: {e.strerror or e}", file=str(directory)) from None
    for name in files:
        target = directory / name
        if target.exists() and not target.is_file():
            raise InputError(
                f"--checkpoint-dir: cannot write {name}: it exists and is not a regular file",
                file=str(directory),
            )
    staged: list[tuple[str, Path]] = []
    name = ""
    try:
        for name, data in files.items():
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
            staged.append((name, Path(tmp_name)))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        for name, staged_path in staged:
            os.replace(staged_path, directory / name)
    except OSError as e:
        for _, staged_path in staged:
            with contextlib.suppress(OSError):
                staged_path.unlink()
        if created:
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise InputError(
            f"--checkpoint-dir: cannot write {name}: {e.strerror or e}", file=str(directory)
        ) from None
    with contextlib.suppress(OSError):
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

"""Checkpoint and output files on disk: the I/O edge of the checkpoint code.

The encodings live in the pure core (``podnuma.cm.checkpoint``,
``podnuma.cm.cpumanager.checkpoint``, ``podnuma.cm.memorymanager.checkpoint``);
this module only reads and writes files. Writes are atomic, as the kubelet's
file store (``pkg/kubelet/util/store/filestore.go``) makes them: a temporary
file in the same directory, fsync, rename; then, beyond the kubelet's, the
directory is fsynced so the rename survives a crash (a failure is the
write's, :func:`sync_directory`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

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
from podnuma.inputs.pathcheck import check_directory
from podnuma.inputs.pathtext import names_directory, path_text

__all__ = [
    "atomic_file",
    "atomic_write",
    "check_file_name",
    "check_replaceable",
    "check_publish_names",
    "held_signals",
    "PublishError",
    "publish_files",
    "file_name_errno",
    "close_dir_fds",
    "sync_directory",
    "read_file",
    "read_cpu_checkpoint_file",
    "write_cpu_checkpoint_file",
    "read_memory_checkpoint_file",
    "write_memory_checkpoint_file",
    "write_checkpoint_dir",
    "StateWriter",
]

_FAULT_PAUSE = float(os.environ.get("PODNUMA_FAULT_WRITE_PAUSE") or 0)


def _write_synced(fh: BinaryIO, data: bytes) -> None:
    """Write ``data`` to a new temporary file and fsync it. With
    ``PODNUMA_FAULT_WRITE_PAUSE`` (the crash tests' fault injection) the
    first half is flushed, then the writer pauses: a kill then leaves a torn
    file on disk."""
    if _FAULT_PAUSE:
        fh.write(data[: len(data) // 2])
        fh.flush()
        time.sleep(_FAULT_PAUSE)
        fh.write(data[len(data) // 2 :])
    else:
        fh.write(data)
    fh.flush()
    os.fsync(fh.fileno())


def close_dir_fds(dirs: dict[str, int]) -> None:
    """Close every descriptor of a cache of open directories and empty it."""
    for fd in dirs.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    dirs.clear()


def atomic_write(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new content,
    never a partial file: temporary file in the same directory, fsync, rename
    (as the kubelet's file store does). The file is private (0600, as the
    kubelet's) unless ``mode`` says otherwise. A device, a named pipe or a
    socket at ``path`` is not replaced: ``OSError`` (``EEXIST``, "it exists
    and is not a regular file"); a symbolic link is replaced, not followed,
    unless it leads to one of those (``/dev/stdout``: replacing the link
    would take the system's away; ``EEXIST``, "it is a link to a device, a
    named pipe or a socket")."""
    with atomic_file(path, mode=mode) as fh:
        _write_synced(fh, data)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, mode: int | None = None) -> Iterator[BinaryIO]:
    """A file written a piece at a time through the handle given, which
    replaces ``path`` when the block ends as :func:`atomic_write` replaces
    it (the temporary file synced, renamed, its directory synced); when the
    block raises, the temporary file is removed and ``path`` is as it was.
    A name ending in ``/`` (``r.json/``) is refused as the system refuses
    to make a file of it (:func:`check_file_name`), not written as
    ``r.json``."""
    check_file_name(path)
    target = Path(path)
    directory = target.parent
    check_replaceable(target)
    fd, tmp = tempfile.mkstemp(prefix="." + target.name + ".", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            yield fh
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
        dir_fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return  # (a directory it may write but not read, mode 0300: nothing to sync through)
    try:
        sync_directory(dir_fd, str(directory))
    finally:
        os.close(dir_fd)


#: what ``fsync`` of a directory answers where the file system does not sync
#: directories at all (nothing failed, nothing to wait for): ``EINVAL`` (on
#: Linux, CIFS and some FUSE file systems), ``EBADF`` (a directory open
#: read-only, on some other systems), ``EISDIR`` (HP-UX), ``ENOTSUP``. What
#: coreutils, Dovecot and restic ignore too; any other error (``EIO``,
#: ``ENOSPC``, ``EDQUOT``...) means the rename may not survive a crash.
_DIR_SYNC_UNSUPPORTED = frozenset({errno.EINVAL, errno.EBADF, errno.EISDIR, errno.ENOTSUP, errno.EOPNOTSUPP})


def sync_directory(fd: int, where: str) -> None:
    """``fsync`` the directory ``fd`` (named ``where``) after a rename in
    it, the last step of an atomic write: an error is the write's
    (``OSError``, its text saying it was the directory's sync), except the
    answers of a file system that cannot sync a directory
    (:data:`_DIR_SYNC_UNSUPPORTED`)."""
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno in _DIR_SYNC_UNSUPPORTED:
            return
        raise OSError(e.errno, f"{e.strerror or e} (syncing the directory after the rename)", where) from None


def file_name_errno(path: str | os.PathLike[str]) -> int | None:
    """Why no file can be made at ``path`` when its name ends as a
    directory's (``r.json/``, ``r.json/.``: the ending :mod:`pathlib`
    drops): ``EISDIR`` where a directory is, or where nothing is yet (the
    name is a directory's: a shell's ``> r.json/`` says so), ``ENOTDIR``
    where a file is (as ``cp`` says it; the kernel's ``open`` would say
    ``EISDIR``), ``ENOENT`` where the directory to hold it is missing,
    else what looking at it fails with; ``None`` for any other name."""
    if not names_directory(path):
        return None
    text = os.fspath(path)
    try:
        os.stat(text)
    except FileNotFoundError:
        parent = os.path.dirname(path_text(text)) or "."
        return errno.EISDIR if os.path.isdir(parent) else errno.ENOENT
    except OSError as e:
        return e.errno if e.errno is not None else errno.ENOTDIR
    return errno.EISDIR


def check_file_name(path: str | os.PathLike[str]) -> None:
    """``OSError`` (:func:`file_name_errno`) when a file cannot be made at
    ``path`` because its name is a directory's."""
    code = file_name_errno(path)
    if code is not None:
        raise OSError(code, os.strerror(code), os.fspath(path))


def check_replaceable(path: str | os.PathLike[str]) -> None:
    """``OSError`` (``EEXIST``) when a result must not be written by
    renaming a file over ``path``: a device, a named pipe or a socket there
    (``/dev/null`` stays a device), or a symbolic link to one, or into
    ``/proc`` or ``/dev`` (``/dev/stdout`` -> ``/proc/self/fd/1``: whatever
    standard output is, replacing that link would take the system's away),
    or one in ``/proc`` (``/proc/self/fd/1`` itself; ``/dev/fd`` leads there).
    Nothing there, a regular file, a directory (the rename then fails) and
    any other link (replaced, not followed) are not refused here."""
    target = Path(path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return
    if not stat.S_ISLNK(st.st_mode):
        raise OSError(errno.EEXIST, "it exists and is not a regular file", str(target))
    to = os.readlink(target)
    top = "/" + to.split("/")[1] if to.startswith("/") else ""
    if top in ("/proc", "/dev"):
        raise OSError(errno.EEXIST, f"it is a link into {top} (a descriptor, standard output or a "
                      "device): not replaced", str(target))
    # (a link in /proc itself, /proc/self/fd/1: standard output, wherever it leads)
    home = os.path.realpath(target.parent)
    if home == "/proc" or home.startswith("/proc/"):
        raise OSError(errno.EEXIST, "it is a link in /proc (a descriptor, standard output or a "
                      "device): not replaced", str(target))
    try:
        followed = os.stat(target)
    except OSError:  # (a link to nothing, or round in a loop: replaced)
        return
    if not (stat.S_ISREG(followed.st_mode) or stat.S_ISDIR(followed.st_mode)):
        raise OSError(errno.EEXIST, "it is a link to a device, a named pipe or a socket", str(target))


def read_file(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a checkpoint file, within the byte limit of the
    commands' inputs (``OSError`` as reading raises it, ``EFBIG`` past it;
    a regular file only: a named pipe or a device is ``OSError``, "not a
    regular file", never waited on)."""
    from podnuma.inputs.documents import read_regular
    from podnuma.inputs.limits import DEFAULT_LIMITS

    return read_regular(Path(path), DEFAULT_LIMITS.max_bytes)


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
    file beside its target (written, fsynced), and only when all are staged
    are they renamed over their targets, then the directories fsynced. A
    failure leaves no temporary file and no half-written checkpoint behind.
    Names are paths under ``directory`` (``device-plugins/...``): their
    directories are created and opened by descriptor without following a
    symlink (:class:`StateWriter`)."""
    check_directory(directory, "--checkpoint-dir", must_exist=False)
    system = _system_tree(directory)
    if system is not None:
        raise InputError(f"--checkpoint-dir: {system}: not a place for checkpoint files", file=str(directory))
    created = not directory.exists()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--checkpoint-dir: cannot create: {e.strerror or e}", file=str(directory)) from None
    name = ""
    try:
        with StateWriter(directory) as writer:
            for name in files:
                if not writer.replaceable(name):
                    raise InputError(
                        f"--checkpoint-dir: cannot write {name}: it exists and is not a regular file",
                        file=str(directory),
                    )
            writer.write_all(files)
    except OSError as e:
        if created:
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise InputError(f"--checkpoint-dir: cannot write {name}: {e.strerror or e}", file=str(directory)) from None


#: the kernel's own trees (devices, processes, the system's state): no
#: result is written there; ``/dev/shm`` (a plain ``tmpfs``) is not one
_SYSTEM_TREES = ("/dev", "/proc", "/sys")


def _system_tree(directory: Path) -> str | None:
    """How ``directory`` (links followed, as the writes would follow them)
    is inside the kernel's own trees (``/dev``, a link into it...), or
    ``None``."""
    real = os.path.realpath(directory)
    for top in _SYSTEM_TREES:
        if real == top or real.startswith(top + "/"):
            if real == "/dev/shm" or real.startswith("/dev/shm/"):
                return None
            shown = "" if str(directory) == real else f" (a link to {real})"
            return f"in {top}{shown}"
    return None


_DIR_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
_FILE_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class StateWriter:
    """Atomic writes of files under a state directory, by descriptor.

    The directory is opened once; each subdirectory on the way to a file is
    created (``mkdirat``, mode 0750) and opened relative to its parent with
    ``O_NOFOLLOW``, so a symlink planted anywhere beneath cannot lead a
    write outside. A file is staged in a fresh temporary file beside its
    target (``O_EXCL | O_NOFOLLOW``, written, fsynced), renamed over the
    target by descriptor (a symlink in the target's place is replaced,
    never followed), and the directories are fsynced."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs: dict[str, int] = {"": os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)}

    def __enter__(self) -> StateWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        close_dir_fds(self._dirs)

    def _dir(self, rel: str, *, create: bool = True) -> int:
        fd = self._dirs.get(rel)
        if fd is not None:
            return fd
        pfd, name = self._split(rel, create=create)
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o750, dir_fd=pfd)
        fd = os.open(name, _DIR_OPEN, dir_fd=pfd)
        self._dirs[rel] = fd
        return fd

    def _split(self, rel: str, *, create: bool = True) -> tuple[int, str]:
        parent, _, name = rel.rpartition("/")
        if name in ("", ".", ".."):
            raise OSError(errno.EINVAL, "not a plain name", rel)
        return self._dir(parent, create=create), name

    def replaceable(self, rel: str) -> bool:
        """Nothing at ``rel``, a regular file or a symlink (replaced)."""
        pfd, name = self._split(rel)
        try:
            st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            return True
        return stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)

    def read(self, rel: str) -> bytes | None:
        """A regular file's bytes (``None``: missing), never through a
        symlink; a missing directory on the way is not created."""
        try:
            pfd, name = self._split(rel, create=False)
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=pfd)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", rel)
            from podnuma.inputs.documents import read_within
            from podnuma.inputs.limits import DEFAULT_LIMITS

            return read_within(fh, DEFAULT_LIMITS.max_bytes, rel)

    def _stage(self, pfd: int, name: str, data: bytes, mode: int) -> str:
        for _ in range(100):
            tmp = f".{name}.{secrets.token_hex(6)}"
            try:
                fd = os.open(tmp, _FILE_CREATE, mode, dir_fd=pfd)
            except FileExistsError:
                continue
            try:
                with os.fdopen(fd, "wb") as fh:
                    os.fchmod(fh.fileno(), mode)
                    _write_synced(fh, data)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=pfd)
                raise
            return tmp
        raise OSError(errno.EEXIST, "no free temporary name", name)

    def write_all(self, files: Mapping[str, bytes], *, mode: int = 0o600) -> None:
        """Stage every file, then rename each over its target, then fsync
        the directories; on failure no temporary file is left. A failed
        directory fsync raises (:func:`sync_directory`): the files are
        renamed, but the renames may not survive a crash."""
        staged: list[tuple[int, str, str]] = []
        try:
            for rel, data in files.items():
                pfd, name = self._split(rel)
                staged.append((pfd, self._stage(pfd, name, data, mode), name))
            if _FAULT_PAUSE:
                time.sleep(_FAULT_PAUSE)
            while staged:
                pfd, tmp, name = staged[0]
                os.replace(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
                staged.pop(0)
        finally:
            for pfd, tmp, _ in staged:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=pfd)
        for rel, fd in list(self._dirs.items()):
            sync_directory(fd, str(self.root / rel) if rel else str(self.root))

    def remove_stale_temp_files(self, names: Iterable[str]) -> int:
        """Remove the temporary files a killed writer left beside ``names``
        (they were never renamed, so they never were state)."""
        removed = 0
        by_dir: dict[str, list[str]] = {}
        for rel in names:
            parent, _, name = rel.rpartition("/")
            by_dir.setdefault(parent, []).append(name)
        for parent, own in by_dir.items():
            try:
                pfd = self._dir(parent, create=False)
            except OSError:
                continue
            for entry in os.listdir(pfd):
                if any(entry.startswith(f".{n}.") for n in own):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry, dir_fd=pfd)
                        removed += 1
        return removed


#: the signals that end a command, held while :func:`publish_files` renames
HELD_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

#: the names :func:`publish_files` gives the files it leaves beside its
#: targets while it runs, all of one publish sharing its writer's process id
#: and a random token (12 hex digits): its plan (``.plan``, written first:
#: which target each index is, and where the writer ran), each content's
#: temporary file (``-I.new``), each previous version kept aside as a
#: second name or a copy (``-I.old``: the target stays in place until the
#: new content replaces it) and each previous version moved aside at its
#: rename (``-I.moved``: another user's file, which may be neither linked
#: nor copied; the target is missing until the new content takes its
#: place). Fixed in form, whatever the name of the file they are for; a
#: later publish into the directory tells from them whether their writer
#: is gone (:func:`_recover`)
_PLAN = ".podnuma-{pid}-{token}.plan"
_STAGED = ".podnuma-{pid}-{token}-{index}.new"
_KEPT = ".podnuma-{pid}-{token}-{index}.old"
_MOVED = ".podnuma-{pid}-{token}-{index}.moved"
_TOKEN_LEN = 12
_LEFTOVER = re.compile(r"\.podnuma-([1-9][0-9]{0,9})-([0-9a-f]{12})\.plan")
#: the widest process id counted for names' lengths, and the largest a
#: plan's name may give (Linux: ``pid_max`` is at most 2**22)
_PID_WIDTH = 10
_PID_MAX = 1 << 22
#: a plan is a few names: one larger is not a plan :func:`publish_files` wrote
_PLAN_MAX = 1 << 20


def _pathconf(directory: str, name: str, default: int) -> int:
    try:
        got = os.pathconf(directory, name)
    except (OSError, ValueError):
        return default
    return got if got > 0 else default


def _longest_temporary(count: int) -> int:
    """The length of the longest name :func:`publish_files` gives a file
    of its own beside ``count`` targets."""
    fill = {"pid": "9" * _PID_WIDTH, "token": "f" * _TOKEN_LEN, "index": str(max(count, 1) - 1)}
    return max(len(p.format(**fill)) for p in (_PLAN, _STAGED, _KEPT, _MOVED))


def check_publish_names(paths: Iterable[str]) -> tuple[str, str] | None:
    """The first of ``paths`` that :func:`publish_files` could not write
    for the length of its name or of its path, or of a temporary name it
    uses beside it, against its directory's limits (``PC_NAME_MAX``,
    ``PC_PATH_MAX``): ``(path, why)``; ``None`` when every one fits."""
    paths = list(paths)
    longest = _longest_temporary(len(paths) + 64)  # (and the files a publish may remove)
    for path in paths:
        directory = os.path.dirname(path) or "."
        name_max = _pathconf(directory, "PC_NAME_MAX", 255)
        path_max = _pathconf(directory, "PC_PATH_MAX", 4096)
        name = os.fsencode(os.path.basename(path))
        if len(name) > name_max:
            return path, (f"{os.strerror(errno.ENAMETOOLONG)}: its name is {len(name)} bytes, more than the "
                          f"{name_max} its directory takes")
        if longest > name_max:
            return path, (f"{os.strerror(errno.ENAMETOOLONG)}: its directory takes names of at most {name_max} "
                          f"bytes, too few for the temporary files ({longest} bytes) written beside it")
        whole = max(len(os.fsencode(path)), len(os.fsencode(os.path.join(directory, "x" * longest))))
        if whole >= path_max:  # (PATH_MAX counts the terminating NUL)
            return path, (f"{os.strerror(errno.ENAMETOOLONG)}: its path (or a temporary file's beside it) is "
                          f"{whole} bytes, more than the {path_max - 1} its directory takes")
    return None


@contextlib.contextmanager
def held_signals(signals: Sequence[int] = HELD_SIGNALS) -> Iterator[None]:
    """Hold ``signals`` (SIGTERM, SIGINT, SIGHUP) while the block runs:
    blocked, and caught by a handler that only records them should one
    reach another thread; when the block ends (returning or raising), the
    handlers are put back and each signal that came is raised again, so it
    does then what it would have done (SIGTERM ends the process, SIGINT is
    ``KeyboardInterrupt``).

    On the main thread only. Elsewhere it holds nothing and changes
    nothing (a no-op): Python sets signal handlers on the main thread
    alone, and a signal for the process is delivered to any thread that
    does not block it, so a thread cannot hold the process's signals for
    itself. A block run on another thread (a web server's worker, a
    caller's pool) can then be ended midway by a termination signal, as
    by ``SIGKILL``: :func:`publish_files` leaves its plan and temporary
    files, which the next publish into that directory recovers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: object) -> None:
        caught.append(signum)

    previous: dict[int, signal.Handlers | int | object] = {}
    try:
        for sig in signals:
            previous[sig] = signal.signal(sig, hold)
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # (a pending one reaches ``hold``)
    finally:
        for sig, handler in previous.items():
            # (signal.signal runs the handlers of signals pending first: ``hold`` sees them)
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)  # type: ignore[arg-type]
    for sig in dict.fromkeys(caught):
        signal.raise_signal(sig)


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _keep_aside(path: str, aside: str, *, regular: bool) -> None:
    """Keep the file at ``path`` as ``aside`` (a new name): a hard link to
    it (a symbolic link itself, not followed), or, where the file system
    makes none, a synced copy of a regular file's bytes and mode."""
    try:
        os.link(path, aside, follow_symlinks=False)
        return
    except OSError as e:
        if not regular or e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
    with open(path, "rb") as src:
        data = src.read()
        perm = stat.S_IMODE(os.fstat(src.fileno()).st_mode)
    fd = os.open(aside, _FILE_CREATE, perm)
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_synced(fh, data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(aside)
        raise


class PublishError(OSError):
    """:func:`publish_files` failed. ``unrestored``: the previous versions
    that could not be put back, kept under these names (none: every file
    is as it was)."""

    def __init__(self, err: int | None, strerror: str | None, filename: str, unrestored: tuple[str, ...] = ()):
        super().__init__(err, strerror, filename)
        self.unrestored = unrestored


def _whereabouts() -> dict[str, str]:
    """Where this process runs, as a plan records it: the host's name, its
    boot's id and the process id namespace (``""``: not known)."""
    boot = pidns = ""
    with contextlib.suppress(OSError, UnicodeDecodeError), \
            open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
        boot = fh.read().strip()
    with contextlib.suppress(OSError):
        st = os.stat("/proc/self/ns/pid")
        pidns = f"{st.st_dev}:{st.st_ino}"
    return {"host": os.uname().nodename, "boot": boot, "pidns": pidns}


def _writer_gone(pid: int, where: Mapping[str, object], here: Mapping[str, str]) -> bool:
    """Whether the process ``pid`` that wrote a plan, recorded as running
    at ``where``, is provably gone: on this host, in this boot and process
    id namespace, with no process ``pid`` now (not this process: another
    thread of it may be publishing). Anything else is not proof: another
    host sharing the directory (even of the same name: cloned machines,
    containers of one host name), another boot (a machine of the same
    name and another boot id cannot be told from this one restarted),
    another container's namespace, a process of that id alive, whoever it
    is."""
    if not here["host"] or where.get("host") != here["host"] or not here["boot"] or not here["pidns"]:
        return False
    if where.get("boot") != here["boot"] or where.get("pidns") != here["pidns"]:
        return False
    if pid == os.getpid() or not 0 < pid <= _PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # (alive, another user's)
        return False
    return False


def _read_plan(directory: str, name: str) -> dict[str, object] | None:
    """A plan's content (a regular file, never through a link), or
    ``None`` when it is not one :func:`publish_files` wrote whole."""
    import json

    try:
        fd = os.open(os.path.join(directory, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, _PLAN_MAX + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        plan = json.loads(data.decode("utf-8", "surrogateescape")) if len(data) <= _PLAN_MAX else None
    except (ValueError, RecursionError):  # (not JSON, or nested past the parser's depth: not a plan)
        return None
    ok = isinstance(plan, dict) and isinstance(plan.get("where"), dict) and isinstance(plan.get("files"), list)
    return plan if ok else None


def _plan_name_ok(name: object) -> bool:
    """A target's name as a plan may give it: one plain name (no ``/``,
    NUL, ``.`` or ``..``) of at most 255 bytes."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\x00" in name:
        return False
    try:
        return len(name.encode("utf-8", "surrogateescape")) <= 255
    except UnicodeEncodeError:
        return False


def _recover(directory: str, targets: Iterable[str], here: Mapping[str, str]) -> list[str]:
    """Clean what an earlier :func:`publish_files` into ``directory``,
    killed midway (``SIGKILL``: nothing of it could run), left beside any
    of ``targets`` (names in ``directory``), when its writer is provably
    gone (:func:`_writer_gone`):

    - a target it had moved aside (``-I.moved``) and whose new content had
      not yet taken its place (the target is missing, its temporary file
      still there) is put back -- by a new link, never over a file come
      since; where that is refused the line returned says where the
      previous version is, and the plan stays for a later publish to try
      again;
    - a moved-aside version whose target was replaced (the temporary file
      is gone: renamed into place) is removed, as is every second name or
      copy kept aside (``-I.old``: the target stayed in place until
      replaced; one missing now was removed since by someone else, and is
      not brought back) and the previous version of a file it was
      removing (its removal was done);
    - its temporary files (never anyone's file) are removed.

    Then its plan is removed. A plan that is not one :func:`publish_files`
    wrote whole, of a writer not provably gone, or naming none of
    ``targets`` is left as it is (and never makes this publish fail)."""
    notes: list[str] = []
    wanted = set(targets)
    try:
        entries = os.listdir(directory)
    except OSError:
        return notes

    def shown(name: str) -> str:
        return name if directory == "." else os.path.join(directory, name)

    for entry in entries:
        m = _LEFTOVER.fullmatch(entry)
        if m is None:
            continue
        pid, token = int(m.group(1)), m.group(2)
        if not 0 < pid <= _PID_MAX:
            continue
        plan = _read_plan(directory, entry)
        if plan is None:
            continue
        files = [f for f in plan["files"] if isinstance(f, list) and len(f) == 3  # type: ignore[attr-defined]
                 and type(f[0]) is int and 0 <= f[0] < 1 << 20 and f[1] in ("write", "remove")
                 and _plan_name_ok(f[2])]
        if not wanted & {f[2] for f in files}:
            continue
        if not _writer_gone(pid, plan["where"], here):  # type: ignore[arg-type]
            continue
        keep_plan = False
        for index, kind, name in files:
            fill = {"pid": pid, "token": token, "index": index}
            staged, kept, moved = (_STAGED.format(**fill), _KEPT.format(**fill), _MOVED.format(**fill))
            target = os.path.join(directory, name)
            staged_there = os.path.lexists(os.path.join(directory, staged))
            moved_path = os.path.join(directory, moved)
            if kind == "write" and os.path.lexists(moved_path) and staged_there and not os.path.lexists(target):
                try:
                    os.link(moved_path, target, follow_symlinks=False)  # (never over a file come since)
                except OSError as e:
                    keep_plan = True
                    notes.append(f"{shown(name)}: missing: its previous version, moved aside as {shown(moved)} "
                                 f"by an earlier write killed midway (process {pid}, gone), could not be put "
                                 f"back: {e.strerror or e}")
                    continue
                notes.append(f"{shown(name)}: put back its previous version, moved aside as {shown(moved)} by an "
                             f"earlier write killed midway (process {pid}, gone)")
            for leftover in (moved, kept, staged):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(directory, leftover))
        if not keep_plan:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, entry))
        _fsync_dir(directory)
    return notes


def _write_plan(path: str, files: Sequence[tuple[int, str, str]], where: Mapping[str, str],
                made: list[str]) -> None:
    """A publish's plan at ``path`` (a new file, added to ``made`` once it
    exists, so that a failure to write it removes it too), synced with its
    directory before any other file of the publish is made."""
    import json

    data = json.dumps({"writer": "podnuma publish_files", "where": dict(where),
                       "files": [list(f) for f in files]}).encode("utf-8", "surrogateescape")
    fd = os.open(path, _FILE_CREATE, 0o600)
    made.append(path)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_dir(os.path.dirname(path) or ".")


def publish_files(files: Sequence[tuple[str, bytes]], *, mode: int = 0o644,
                  remove: Sequence[tuple[str, tuple[int, int]]] = ()) -> list[str]:
    """Write every file of ``files`` (path, content), and remove every file
    of ``remove`` (path, and the ``(st_dev, st_ino)`` it must still have:
    one replaced since is left as it is), or do none of it, as far as POSIX
    allows: first a plan beside the targets (:func:`_recover` reads it
    should this process be killed midway); every content written to a
    temporary file beside its path and fsynced; the file each will replace
    kept aside (a hard link beside it, else a synced copy; a file this
    process may neither link nor read, another user's, is renamed aside at
    its rename instead; a file to remove is renamed aside at its turn);
    only then each temporary file renamed into place and each file to
    remove renamed aside, the termination signals held meanwhile
    (:func:`held_signals`, on the main thread: they take effect once every
    rename is done, or undone). When one of them fails, the files already
    renamed are put back as they were (the previous version renamed back,
    a new file removed, a removed file renamed back), every temporary file
    and kept version is removed, and the directories fsynced: then
    :class:`PublishError` naming the path given (never a temporary
    file's), with the previous versions that could not be put back.

    Before anything, what an earlier publish killed midway left beside
    the same targets is recovered (:func:`_recover`); the lines it returns
    (a previous version put back, or one that could not be) are returned."""
    here = _whereabouts()
    pid, token = os.getpid(), secrets.token_hex(_TOKEN_LEN // 2)
    plan: list[tuple[int, str, str]] = [(i, "write", p) for i, (p, _) in enumerate(files)]
    plan += [(len(files) + i, "remove", p) for i, (p, _) in enumerate(remove)]
    by_dir: dict[str, list[tuple[int, str, str]]] = {}
    for index, kind, p in plan:
        by_dir.setdefault(os.path.dirname(p) or ".", []).append((index, kind, os.path.basename(p)))
    directories = list(by_dir)
    notes: list[str] = []
    for directory, own in by_dir.items():
        notes += _recover(directory, [name for _, _, name in own], here)

    def own_name(pattern: str, path: str, index: int) -> str:
        return os.path.join(os.path.dirname(path) or ".", pattern.format(pid=pid, token=token, index=index))

    plans: list[str] = []
    staged: list[tuple[str, str | None, str | None]] = []  # (path, temporary file, previous version kept)
    moved: set[str] = set()  # paths whose previous version is renamed aside at the rename, not linked
    path = plan[0][2] if plan else ""

    def cleanup(keep: frozenset[str] = frozenset()) -> None:
        for _, tmp, kept in staged:
            for leftover in (tmp, kept):
                if leftover is not None and leftover not in keep:
                    with contextlib.suppress(OSError):
                        os.unlink(leftover)
        for made in plans:  # (last: while it is there, a kill leaves nothing it does not name)
            with contextlib.suppress(OSError):
                os.unlink(made)

    try:
        for directory, own in by_dir.items():
            path = next(p for i, _, p in plan if i == own[0][0])
            _write_plan(os.path.join(directory, _PLAN.format(pid=pid, token=token)), own, here, plans)
        for index, (path, data) in enumerate(files):
            tmp = own_name(_STAGED, path, index)
            fd = os.open(tmp, _FILE_CREATE, mode)
            staged.append((path, tmp, None))
            with os.fdopen(fd, "wb") as fh:
                os.fchmod(fh.fileno(), mode)
                _write_synced(fh, data)
            try:
                st: os.stat_result | None = os.lstat(path)
            except FileNotFoundError:
                st = None
            if st is not None and (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                kept = own_name(_KEPT, path, index)
                try:
                    _keep_aside(path, kept, regular=stat.S_ISREG(st.st_mode))
                except PermissionError:
                    # another user's file (no link to it allowed, nor a copy
                    # of its bytes): moved aside at the rename instead
                    moved.add(path)
                    kept = own_name(_MOVED, path, index)
                staged[-1] = (path, tmp, kept)
        for index, (path, identity) in enumerate(remove, start=len(files)):
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            if (st.st_dev, st.st_ino) != identity:
                continue  # (another file is there now: not the one to remove)
            staged.append((path, None, own_name(_KEPT, path, index)))
    except OSError as e:
        cleanup()
        raise OSError(e.errno, e.strerror, path) from None
    except BaseException:
        cleanup()
        raise
    done: list[tuple[str, str | None]] = []
    with held_signals():
        try:
            for path, new, aside in staged:
                if new is None or (aside is not None and path in moved):
                    assert aside is not None
                    os.rename(path, aside)
                    done.append((path, aside))  # (put back from there should the next step fail)
                    if new is not None:
                        os.replace(new, path)
                    continue
                os.replace(new, path)
                done.append((path, aside))
        except BaseException as e:
            unrestored: set[str] = set()
            for back, previous in reversed(done):  # (each put back as it was)
                try:
                    if previous is not None:
                        os.replace(previous, back)
                    else:
                        os.unlink(back)
                except OSError:
                    if previous is not None:  # (the previous version is not thrown away)
                        unrestored.add(previous)
            cleanup(frozenset(unrestored))
            for directory in directories:
                _fsync_dir(directory)
            if isinstance(e, OSError):
                raise PublishError(e.errno, e.strerror, path, tuple(sorted(unrestored))) from None
            raise
        cleanup()
        for directory in directories:
            _fsync_dir(directory)
    return notes

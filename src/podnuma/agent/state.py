"""The agent's state directory: the kubelet's checkpoint files.

``cpu_manager_state``, ``memory_manager_state`` and the device manager's
``device-plugins/kubelet_internal_checkpoint`` are written in the
kubelet's format (the same bytes ``podnuma simulate --checkpoint-dir``
writes), each atomically: temporary file beside it, fsync, rename,
directory fsync, every directory opened by descriptor without following a
symlink (:class:`podnuma.fileio.StateWriter`). A file whose bytes did not
change is not rewritten.

On start they are restored as the kubelet restores them
(``restoreState``): a missing file is a fresh state; a file that does not
decode, whose checksum does not match or whose policy differs refuses the
start with the kubelet's message (``could not restore state from
checkpoint: ..., please drain this node and delete ...``) -- never a silent
reset. The device manager's checkpoint never refuses a start: one that
cannot be read restores no device state (the kubelet logs it and goes on),
one that can restores the devices each container holds. Temporary files a
killed agent left behind are removed (they were never renamed, so they
never were state).

One check goes beyond the kubelet's: exclusive CPUs held by two different
pods (:func:`double_assignments`). kubelet v1.37.2's ``validateState``
accepts such a state (it checks the default set and the total, not the
assignments against each other); when one of the pods goes, its CPUs return
to the shared pool while the other still holds them, and the checkpoint
written then is one the next start refuses. The agent refuses the state at
start instead, before it serves PodResources with a CPU given twice.

One agent at a time per directory: :meth:`StateDir.lock` takes an
exclusive ``flock`` on ``podnuma-agent.lock`` in it (opened without
following a symlink) and holds it for the agent's life, so that a second
agent is refused before it restores, cleans or writes anything (the kernel
drops the lock with the process, however it ends; the file stays). While
the lock is held, each write first checks that the path still names the
directory locked: one removed (or removed and made again) while the agent
runs stops it with a message saying so (:class:`StateDirGone`), nothing
written into a directory it does not hold.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.cm.container_manager import (
    CPU_CHECKPOINT_FILE,
    DEVICE_CHECKPOINT_FILE,
    MEMORY_CHECKPOINT_FILE,
)
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, restore_cpu_state
from podnuma.cm.devicemanager.checkpoint import DeviceCheckpointData, read_device_checkpoint
from podnuma.cm.memorymanager.checkpoint import MemoryCheckpointData, restore_memory_state
from podnuma.errors import InputError
from podnuma.fds import descriptors_exhausted
from podnuma.fileio import StateWriter
from podnuma.golang.strconv import go_quote
from podnuma.inputs.pathcheck import check_directory, unreachable
from podnuma.inputs.state import exclusive_cpu_sets

__all__ = ["LOCK_FILE", "RestoredState", "StateDir", "StateDirGone", "STATUS_FILE", "double_assignments"]

STATUS_FILE = "podnuma-agent-status.json"
#: held (``flock``) by the agent using the directory, for its whole life
LOCK_FILE = "podnuma-agent.lock"
_OWN_FILES = (CPU_CHECKPOINT_FILE, MEMORY_CHECKPOINT_FILE, DEVICE_CHECKPOINT_FILE, STATUS_FILE)

_State = TypeVar("_State")


@dataclass(frozen=True)
class RestoredState:
    cpu: CPUCheckpointData | None
    memory: MemoryCheckpointData | None
    stale_temp_files: int
    device: DeviceCheckpointData | None = None


class StateDirGone(InputError):
    """The state directory was removed while the agent ran (its path names
    no directory, or another one than the agent locked)."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            "the state directory was removed while the agent ran, its checkpoints with it; the agent "
            "stopped (started again, it admits the manifests' pods on a fresh state)",
            file=str(path),
        )


class StateDir:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._written: dict[str, bytes] = {}
        self._lock_fd: int | None = None
        self._locked: tuple[int, int] | None = None  # (device, inode) of the directory locked

    def prepare(self) -> None:
        """Create the directory (mode 0750) if needed; refuse a non-directory
        and one that cannot be reached."""
        check_directory(self.path, "--state-dir", must_exist=False)
        try:
            self.path.mkdir(mode=0o750, parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"--state-dir: cannot create: {e.strerror or e}", file=str(self.path)) from None

    def lock(self) -> None:
        """Make the directory if needed and take its lock, held until
        :meth:`unlock` (or the process ends): ``InputError`` when another
        agent holds it, or the lock file cannot be had."""
        self.prepare()
        try:
            dfd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise InputError(f"--state-dir: cannot open: {unreachable(e)}", file=str(self.path)) from None
        try:
            fd = self._open_lock_file(dfd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise InputError(
                    f"another agent is running on this state directory (it holds {LOCK_FILE}); "
                    "one agent per state directory", file=str(self.path)) from None
            except OSError as e:
                os.close(fd)
                raise InputError(f"cannot lock {LOCK_FILE}: {e.strerror or e}", file=str(self.path)) from None
            st = os.fstat(dfd)
        finally:
            os.close(dfd)
        self._lock_fd = fd
        self._locked = (st.st_dev, st.st_ino)

    def _open_lock_file(self, dfd: int) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(LOCK_FILE, flags, 0o600, dir_fd=dfd)
        except OSError as e:
            why = "it is a symlink (not followed)" if e.errno == errno.ELOOP else str(e.strerror or e)
            raise InputError(f"cannot open its lock file {LOCK_FILE}: {why}", file=str(self.path)) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InputError(f"cannot open its lock file {LOCK_FILE}: not a regular file", file=str(self.path))
        return fd

    def unlock(self) -> None:
        """Let the lock go (the file stays: removing it would race with an
        agent opening it to lock)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _still_there(self) -> None:
        """While locked: ``StateDirGone`` unless the path still names the
        directory locked."""
        if self._locked is None:
            return
        try:
            st = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            raise StateDirGone(self.path) from None
        except OSError:
            return  # (told by the opening, next)
        if (st.st_dev, st.st_ino) != self._locked:
            raise StateDirGone(self.path)

    def _writer(self) -> StateWriter:
        self._still_there()
        try:
            return StateWriter(self.path)
        except OSError as e:
            if descriptors_exhausted(e):
                raise  # (passing: the agent's loop tries again later)
            if self._locked is not None:
                if e.errno in (errno.ENOENT, errno.ENOTDIR):
                    raise StateDirGone(self.path) from None
                raise InputError(f"the state directory cannot be opened: {e.strerror or e}",
                                 file=str(self.path)) from None
            raise InputError(f"--state-dir: cannot open: {e.strerror or e}", file=str(self.path)) from None

    def remove_stale_temp_files(self) -> int:
        with self._writer() as w:
            return w.remove_stale_temp_files(_OWN_FILES)

    def restore(self, config: KubeletConfig) -> RestoredState:
        """Read both checkpoints the kubelet's way (``KubeletStartupError``
        with its message on a corrupt one)."""
        self.prepare()
        stale = self.remove_stale_temp_files()
        pod_level = config.feature_gates.enabled("PodLevelResourceManagers")
        state_dir = str(self.path)
        cpu = self._restore(
            CPU_CHECKPOINT_FILE,
            lambda blob: restore_cpu_state(
                blob, config.cpu_manager_policy, pod_level_resource_managers=pod_level, state_dir=state_dir
            ),
        )
        if cpu is not None:
            twice = double_assignments(cpu)
            if twice is not None:
                raise InputError(
                    f"exclusive CPUs held by two pods: {twice}; kubelet v1.37.2 starts with this state "
                    "and writes it back with those CPUs in the shared pool as well, which its next start "
                    "refuses, so the agent refuses it now: drain this node and delete the CPU manager "
                    "checkpoint file before restarting",
                    file=str(self.path / CPU_CHECKPOINT_FILE),
                )
        memory = self._restore(
            MEMORY_CHECKPOINT_FILE,
            lambda blob: restore_memory_state(
                blob, config.memory_manager_policy, pod_level_resource_managers=pod_level, state_dir=state_dir
            ),
        )
        try:
            device = self._restore(DEVICE_CHECKPOINT_FILE, read_device_checkpoint)
        except InputError as e:  # (the kubelet logs a device checkpoint it cannot read, starts without)
            device = DeviceCheckpointData(error=e.message)
        return RestoredState(cpu, memory, stale, device)

    def _restore(self, name: str, restore: Callable[[bytes], _State]) -> _State | None:
        """The checkpoint file ``name`` restored by ``restore`` (``None`` when
        there is none); once restored, its bytes are what the directory holds."""
        blob = self._read(name)
        if blob is None:
            return None
        state = restore(blob)
        self._written[name] = blob
        return state

    def _read(self, name: str) -> bytes | None:
        """A state file's bytes (``None``: missing), never through a symlink."""
        try:
            with self._writer() as w:
                return w.read(name)
        except OSError as e:
            raise InputError(f"cannot read {name}: {_why(e)}", file=str(self.path)) from None

    def write(self, files: dict[str, bytes]) -> int:
        """Write the changed checkpoint files atomically; how many were written."""
        changed = {name: data for name, data in files.items() if self._written.get(name) != data}
        if not changed:
            return 0
        with self._writer() as w:
            for name, data in changed.items():
                try:
                    w.write_all({name: data})
                except OSError as e:
                    if descriptors_exhausted(e):
                        raise  # (passing: the agent's loop tries again later)
                    raise InputError(f"cannot write {name}: {_why(e)}", file=str(self.path)) from None
                self._written[name] = data
        return len(changed)

    def write_status(self, data: bytes) -> None:
        with self._writer() as w:
            # (for the state directory's group, as the directory is: the
            # skipped files' errors may quote what the agent, not any user,
            # could read of them)
            try:
                w.write_all({STATUS_FILE: data}, mode=0o640)
            except OSError as e:
                if descriptors_exhausted(e):
                    raise  # (passing: the agent's loop tries again later)
                raise InputError(f"cannot write {STATUS_FILE}: {_why(e)}", file=str(self.path)) from None


def _why(e: OSError) -> str:
    if e.errno in (errno.ENOTDIR, errno.ELOOP):
        return f"{e.strerror}: a symlink or a non-directory on the way (the state directory's files are never reached through a symlink)"
    return str(e.strerror or e)


def double_assignments(cpu: CPUCheckpointData) -> str | None:
    """The first exclusive set of one pod overlapping another pod's, in the
    kubelet's wording (``pod: P, container: C cpuset: "..."``), or ``None``.
    The containers of one pod may share CPUs (an init container's are reused,
    a pod-level set holds its containers' sets); two pods may not."""
    held = [
        (uid, f"pod: {uid} (pod-level) cpuset: " if name is None else f"pod: {uid}, container: {name} cpuset: ", cpus)
        for uid, name, cpus in exclusive_cpu_sets(cpu)
    ]
    for i, (uid, what, cpus) in enumerate(held):
        for other_uid, other, other_cpus in held[:i]:
            if other_uid != uid and cpus & other_cpus:
                return f"{what}{go_quote(str(cpus))} overlaps with {other}{go_quote(str(other_cpus))}"
    return None

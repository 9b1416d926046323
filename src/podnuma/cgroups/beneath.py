"""File operations confined to a directory tree: nothing reached through a
symlink, nothing outside the root, whatever happens concurrently.

Every operation starts from a descriptor of the root opened once, and every
directory on the way is opened as a descriptor relative to its parent:

- with ``openat2(2)`` (Linux >= 5.6) and ``RESOLVE_BENEATH |
  RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS``, the kernel resolves the
  whole relative path and refuses any symlink or any step out of the root
  (``ELOOP`` / ``EXDEV``) atomically;
- elsewhere (older kernels, seccomp filters that deny it) one component at a
  time, ``openat(parent_fd, name, O_DIRECTORY | O_NOFOLLOW)``: a component
  that is a symlink at the moment it is opened fails with ``ELOOP``, and a
  descriptor once held is the directory itself, whatever is renamed or
  swapped afterwards.

The last component is then created, opened, removed or listed relative to
its parent's descriptor with calls that do not follow a symlink there
either (``mkdirat``, ``openat(O_NOFOLLOW)``, ``unlinkat``,
``fstatat(AT_SYMLINK_NOFOLLOW)``). Files are opened non-blocking (a FIFO
planted in the tree cannot hang a write) and must be regular files; on a
plain directory a file with more than one hard link is refused before it is
truncated, so a link to a file elsewhere cannot be overwritten through it.

Paths handed in are relative, ``/``-separated, of plain names (the caller
checks them: no ``..``, ``.``, empty or NUL components).

Directory descriptors are cached, a bounded number of them
(:data:`DIR_CACHE`, the least recently used closed first), so walking a tree
planted thousands of directories deep holds a few dozen descriptors, not
one per directory: a directory not cached is opened from its nearest cached
ancestor (the root's descriptor is always held) -- in one ``openat2`` call
when the rest of the path fits the kernel's ``PATH_MAX``, else one
component at a time, the last few kept in the cache (a walk back up a deep
tree finds its parents there) and the others closed as it goes. A descriptor handed out by
:meth:`Beneath.dir_fd` stays valid until the next call that opens a
directory: each operation here asks for one and uses it at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from pathlib import Path
from types import TracebackType

from podnuma.fileio import close_dir_fds

__all__ = ["DIR_CACHE", "Beneath", "openat2_available"]

_SYS_OPENAT2 = 437  # the same number on every architecture (added in 5.6)
_SYS_FACCESSAT2 = 439  # likewise (added in 5.8)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_AT_EACCESS_NOFOLLOW = 0x200 | 0x100  # AT_EACCESS | AT_SYMLINK_NOFOLLOW
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW

#: how many directory descriptors a :class:`Beneath` keeps besides the root's
DIR_CACHE = 32
#: the kernel's limit on a path handed to a system call, its NUL included
_PATH_MAX = 4096

#: None: probe on first use; tests set it to force one way.
_USE_OPENAT2: bool | None = None


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_libc: ctypes.CDLL | None = None


def _syscall() -> ctypes.CDLL | None:
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
            _libc.syscall.restype = ctypes.c_long
        except OSError:
            return None
    return _libc


def _openat2(dir_fd: int, path: str, flags: int) -> int:
    libc = _syscall()
    if libc is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    raw = os.fsencode(path)
    for _ in range(16):
        fd = libc.syscall(
            ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dir_fd), ctypes.c_char_p(raw),
            ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)),
        )  # fmt: skip
        if fd >= 0:
            return int(fd)
        code = ctypes.get_errno()
        if code not in (errno.EAGAIN, errno.EINTR):  # EAGAIN: a rename raced the lookup
            raise OSError(code, os.strerror(code), path)
    raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN), path)


def openat2_available() -> bool:
    """Whether this kernel (and any seccomp filter) lets ``openat2`` through."""
    global _USE_OPENAT2
    if _USE_OPENAT2 is None:
        try:
            fd = _openat2(-100, ".", _DIR_FLAGS)  # AT_FDCWD
        except OSError:
            _USE_OPENAT2 = False
        else:
            os.close(fd)
            _USE_OPENAT2 = True
    return _USE_OPENAT2


def _split(rel: str) -> tuple[str, str]:
    parent, _, name = rel.rpartition("/")
    return parent, name


class Beneath:
    """Descriptor-based operations under ``root`` (see the module docstring).
    At most :data:`DIR_CACHE` directory descriptors are cached besides the
    root's; :meth:`close` (or the ``with`` block) releases them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._dirs: dict[str, int] = {"": self.fd}  # least recently used first
        self.openat2 = openat2_available()

    def __enter__(self) -> Beneath:
        return self

    def __exit__(
        self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        close_dir_fds(self._dirs)

    # -- directories -----------------------------------------------------------
    def dir_fd(self, rel: str) -> int:
        """A descriptor of the directory ``rel`` (``""``: the root), valid
        until the next call that opens a directory (the cache is bounded)."""
        fd = self._dirs.pop(rel, None)
        if fd is not None:
            self._dirs[rel] = fd  # (now the most recently used)
            return fd
        # the nearest cached ancestor (a look at each cached name, not at
        # each of a deep path's prefixes)
        base = max((k for k in self._dirs if k and rel.startswith(k) and rel[len(k) : len(k) + 1] == "/"),
                   key=len, default="")  # fmt: skip
        start = len(base) + 1 if base else 0
        rest = rel[start:]
        if self.openat2 and len(os.fsencode(rest)) < _PATH_MAX:
            return self._keep(rel, _openat2(self._dirs[base], rest, _DIR_FLAGS))
        # one component at a time, the last few kept (a walk back up finds
        # its parents there), the others closed as soon as the next is open
        names = rest.split("/")
        cache_from = len(names) - min(len(names), DIR_CACHE // 2)
        parent, own = self._dirs[base], False
        for i, name in enumerate(names):
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=parent)
            finally:
                if own:
                    os.close(parent)
            start += len(name)
            if i >= cache_from:
                self._keep(rel[:start], child)  # (the parent, used, may be closed now)
            parent, own = child, i < cache_from
            start += 1
        return parent

    def _keep(self, rel: str, fd: int) -> int:
        """Cache ``fd`` as ``rel``'s, closing the least recently used beyond
        :data:`DIR_CACHE` (never the root's, never ``fd``)."""
        self._dirs[rel] = fd
        while len(self._dirs) > DIR_CACHE + 1:
            old = next(k for k in self._dirs if k)
            with contextlib.suppress(OSError):
                os.close(self._dirs.pop(old))
        return fd

    def _forget(self, rel: str) -> None:
        for key in [k for k in self._dirs if k == rel or k.startswith(rel + "/")]:
            with contextlib.suppress(OSError):
                os.close(self._dirs.pop(key))

    def is_dir(self, rel: str) -> bool:
        """A directory (not a symlink to one) reachable without symlinks."""
        try:
            self.dir_fd(rel)
        except OSError:
            return False
        return True

    def lstat(self, rel: str) -> os.stat_result:
        parent, name = _split(rel)
        return os.stat(name, dir_fd=self.dir_fd(parent), follow_symlinks=False)

    def exists(self, rel: str) -> bool:
        try:
            self.lstat(rel)
        except OSError:
            return False
        return True

    def mkdir(self, rel: str, mode: int = 0o755) -> bool:
        """Create directory ``rel``; ``False`` when a directory is already
        there. Anything else in its place (a symlink, a file) is an error."""
        parent, name = _split(rel)
        pfd = self.dir_fd(parent)
        try:
            os.mkdir(name, mode, dir_fd=pfd)
        except FileExistsError:
            st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                return False
            code = errno.ELOOP if stat.S_ISLNK(st.st_mode) else errno.EEXIST
            raise OSError(code, os.strerror(code), rel) from None
        return True

    def check_mkdir(self, rel: str) -> bool:
        """What :meth:`mkdir` would do, without doing it (a dry run): ``True``
        when it would create ``rel``, ``False`` when a directory is already
        there, and the :class:`OSError` it would raise otherwise -- a
        symlink or a non-directory on the way or in its place (``ELOOP``,
        ``ENOTDIR``, ``EEXIST``), or a parent the caller may not write
        (``faccessat(W_OK | X_OK)``: ``EACCES``, ``EROFS``)."""
        parent, name = _split(rel)
        pfd = self.dir_fd(parent)
        try:
            st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            _check_access(pfd, ".", os.W_OK | os.X_OK, rel)
            return True
        if stat.S_ISDIR(st.st_mode):
            return False
        code = errno.ELOOP if stat.S_ISLNK(st.st_mode) else errno.EEXIST
        raise OSError(code, os.strerror(code), rel)

    def check_write(self, rel: str, *, create: bool, single_link: bool) -> None:
        """The :class:`OSError` :meth:`open_write` would raise for ``rel``,
        found without opening it (a dry run: opening a FIFO or a device has
        effects of its own): ``ENOENT`` for a missing file unless
        ``create``, ``ELOOP`` for a symlink, ``EISDIR`` for a directory,
        ``ENXIO`` for a FIFO or socket (what ``open(O_WRONLY | O_NONBLOCK)``
        answers when no one reads it), ``EINVAL`` "not a regular file" for a
        device, ``EMLINK`` for other hard links with ``single_link``, and
        what ``faccessat(W_OK)`` answers (``EACCES``, ``EPERM``, ``EROFS``)
        for a file, or for the directory a new file would be made in."""
        parent, name = _split(rel)
        pfd = self.dir_fd(parent)
        try:
            st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            if not create:
                raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), rel) from None
            _check_access(pfd, ".", os.W_OK | os.X_OK, rel)
            return
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), rel)
        if stat.S_ISDIR(mode):
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR), rel)
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            raise OSError(errno.ENXIO, os.strerror(errno.ENXIO), rel)
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", rel)
        if single_link and st.st_nlink > 1:
            raise OSError(errno.EMLINK, "refusing a file with other hard links", rel)
        _check_access(pfd, name, os.W_OK, rel)

    def rmdir(self, rel: str) -> None:
        parent, name = _split(rel)
        pfd = self.dir_fd(parent)
        self._forget(rel)
        os.rmdir(name, dir_fd=pfd)

    def listdir(self, rel: str) -> list[tuple[str, int]]:
        """``(name, st_mode)`` of each entry (not following symlinks)."""
        fd = self.dir_fd(rel)
        out: list[tuple[str, int]] = []
        for name in os.listdir(fd):
            with contextlib.suppress(OSError):
                out.append((name, os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode))
        return sorted(out)

    # -- files -------------------------------------------------------------------
    def unlink(self, rel: str) -> None:
        parent, name = _split(rel)
        os.unlink(name, dir_fd=self.dir_fd(parent))

    def read(self, rel: str, limit: int = 1 << 16) -> bytes:
        """At most ``limit`` bytes of the regular file ``rel``; anything else
        there (a device, a FIFO, a socket, a symlink) is refused before it
        is opened (opening a device can start what it drives)."""
        parent, name = _split(rel)
        pfd = self.dir_fd(parent)
        if not stat.S_ISREG(os.stat(name, dir_fd=pfd, follow_symlinks=False).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", rel)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=pfd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", rel)
            return os.read(fd, limit)
        finally:
            os.close(fd)

    def open_write(self, rel: str, *, create: bool, single_link: bool) -> tuple[int, bool]:
        """A descriptor open for writing ``rel`` and whether this call created
        the file (``create``: a plain directory, where files are made; a
        cgroup file system offers its files). ``single_link``: refuse a file
        with other hard links. The caller truncates (a plain file) to what it
        wrote: a truncation to zero before the write would make some file
        systems flush on close (ext4's ``auto_da_alloc``)."""
        parent, name = _split(rel)
        pfd = self.dir_fd(parent)
        flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        created = False
        if create:
            try:
                fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=pfd)
                created = True
            except FileExistsError:
                fd = os.open(name, flags, dir_fd=pfd)
        else:
            fd = os.open(name, flags, dir_fd=pfd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", rel)
            if single_link and st.st_nlink > 1:
                raise OSError(errno.EMLINK, "refusing a file with other hard links", rel)
        except BaseException:
            os.close(fd)
            raise
        return fd, created


def _check_access(dir_fd: int, name: str, mode: int, rel: str) -> None:
    """``faccessat(dir_fd, name, mode, AT_EACCESS | AT_SYMLINK_NOFOLLOW)``:
    the :class:`OSError` the kernel's permission check gives (``EACCES``,
    ``EPERM`` for an immutable file, ``EROFS``), checked with the effective
    ids as an ``open`` or ``mkdir`` would be."""
    libc = _syscall()
    if libc is None or not _faccessat_usable(libc, dir_fd):
        return  # nothing to ask: the write itself will answer
    code = _faccessat(libc, dir_fd, name, mode)
    if code in (errno.EINVAL, errno.ENOSYS):
        return  # a libc or kernel without these flags: no prediction
    if code:
        raise OSError(code, os.strerror(code), rel)


#: whether ``faccessat`` with flags answers here (probed once): glibc asks
#: the ``faccessat2`` system call, which a seccomp profile may refuse with
#: ``EPERM`` (container runtimes before moby/moby#41353), and which a
#: kernel before 5.8 lacks (glibc then guesses from the mode bits, without
#: ACLs or capabilities): either way, no prediction
_FACCESSAT_USABLE: list[bool] = []


def _faccessat(libc: ctypes.CDLL, dir_fd: int, name: str, mode: int) -> int:
    ctypes.set_errno(0)
    if libc.faccessat(ctypes.c_int(dir_fd), os.fsencode(name), ctypes.c_int(mode),
                      ctypes.c_int(_AT_EACCESS_NOFOLLOW)) != 0:
        return ctypes.get_errno() or errno.EINVAL
    return 0


def _faccessat_usable(libc: ctypes.CDLL, dir_fd: int) -> bool:
    """Whether the kernel itself answers ``faccessat2`` (the system call,
    asked directly: ``F_OK`` of the directory ``dir_fd`` is, which only a
    refused or missing call can deny)."""
    if not _FACCESSAT_USABLE:
        ctypes.set_errno(0)
        got = libc.syscall(ctypes.c_long(_SYS_FACCESSAT2), ctypes.c_int(dir_fd), b".", ctypes.c_int(os.F_OK),
                           ctypes.c_int(_AT_EACCESS_NOFOLLOW))
        _FACCESSAT_USABLE.append(got == 0)
    return _FACCESSAT_USABLE[0]

"""Write a :class:`~podnuma.cgroups.plan.CgroupPlan` under a cgroup root.

The only module of podnuma that writes cgroup files. ``root`` is a cgroup v2
mount (or any directory under one), or for v1 a directory holding one
hierarchy per controller (``cpuset/``, ``cpu/``, ``memory/``, ``hugetlb/``,
like ``/sys/fs/cgroup``). A plain directory works too (tests, dry runs on
a copy): files are then created as ordinary files.

Order, as the kernel requires (linux kernel/cgroup/cpuset.c, cgroup.c):

1. parents before children; on v2 each parent's ``cgroup.subtree_control``
   first gets ``+ctrl`` for every controller it offers (runc's
   ``CreateCgroupPath``);
2. cpusets before anything joins: a new cgroup's ``cpuset.cpus`` and
   ``cpuset.mems`` are set (planned, else copied from the parent as runc's
   ``cpusetEnsureParent`` does on v1) before any other file, so tasks can
   be moved in afterwards (:func:`attach`);
3. CPUs and memory nodes widened top-down (current ∪ planned) before being
   narrowed bottom-up to the plan, so no v1 child ever falls outside its
   parent (EBUSY/EACCES otherwise);
4. then the other files in plan order (cpu, memory, hugetlb).

Reserved cgroups (kind ``reserved``: ``systemReservedCgroup`` /
``kubeReservedCgroup`` under ``enforceNodeAllocatable``) are never created:
the kubelet only updates them and refuses to start when one is missing
(its cgroup manager's ``Validate``: on v2 the cgroup's
``cgroup.controllers`` must list every controller the kubelet uses that the
root offers -- cpu, cpuset, memory, hugetlb, pids --; on v1 the cgroup must
be there in every such hierarchy). The apply checks the same before its
first write and refuses (:class:`InputError`, no write) when one is missing;
on a plain directory the cgroup's directory must be there.

Kernel refusals (EINVAL, ERANGE, ENOSPC, EBUSY, EACCES/EPERM, ENOENT) become
:class:`CgroupWriteError` naming the file and the value, explained as the
cgroup code's on a cgroup file system and as an ordinary file system's on a
plain directory (:func:`explain_errno`: ENOSPC is an empty cpuset on the
one, a full disk on the other).

Confinement: every file operation goes through :mod:`podnuma.cgroups.beneath`
-- directory descriptors opened from the root without following a symlink
(``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``, else an
``O_NOFOLLOW`` walk) -- so no race can make a write land outside ``root``.
Before the first write the whole plan is validated (:func:`validate_plan`:
plain names of at most ``NAME_MAX`` bytes, paths under ``PATH_MAX``); a
write refused midway removes what the apply created. A dry run makes the
read-only checks of what the real run would be refused (a symlink, a file
or a FIFO in the way, a file with other hard links, a directory or file
that cannot be written: :meth:`Beneath.check_mkdir`, :meth:`Beneath.check_write`)
and fails with the same error; only the kernel's answer to a value cannot
be foreseen. Cgroups of pods the
plan no longer has are removed first, leaves first, however deep the tree
below them (a walk without recursion holding a bounded number of
descriptors; a cgroup whose path reaches ``PATH_MAX`` is kept, as the
kubelet's removal by path fails there) (or reported as
``stale`` when the kernel refuses, e.g. still populated: a ``cgroup.procs``
listing a process, on a plain directory and in a dry run too). On a plain
directory only the files podnuma writes are deleted (the names its plans
write, :func:`~podnuma.cgroups.plan.is_written_file`); a directory holding
anything else is left whole and reported as ``stale``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from podnuma.cgroups.beneath import Beneath
from podnuma.cgroups.plan import (
    NAME_MAX,
    RUNTIME_DEFAULT_PARENT,
    CgroupNode,
    CgroupPlan,
    is_container_id,
    is_written_file,
    name_problem,
    short_name,
)
from podnuma.errors import InputError
from podnuma.inputs.pathcheck import check_directory
from podnuma.machine.cpuset import CPUSet, CPUSetParseError

__all__ = [
    "NAME_MAX",
    "Operation",
    "ApplyReport",
    "CgroupWriteError",
    "apply_plan",
    "attach",
    "remove_plan",
    "is_cgroupfs",
    "explain_errno",
    "name_problem",
    "validate_plan",
]

PATH_MAX = 4096  # bytes in a path (linux/limits.h)

V1_CONTROLLERS = ("cpuset", "cpu", "memory", "hugetlb", "pids")

#: Why a write or ``mkdir`` failed on a cgroup file system: the kernel's
#: cgroup code answering (kernel/cgroup/cgroup.c, cpuset.c)
_CGROUP_ERRNO_TEXT = {
    errno.EINVAL: "the kernel refused the value (malformed, outside the machine or the "
    "parent's limits, or overlapping an exclusive sibling)",
    errno.ERANGE: "the value is out of range (e.g. a CPU id beyond the machine, cpu.weight "
    "outside 1-10000)",
    errno.ENOSPC: "no CPUs or memory nodes left (an empty cpuset cannot hold tasks, and a "
    "populated one cannot be emptied)",
    errno.EBUSY: "busy: a child cgroup still uses these CPUs/nodes or controllers, or the "
    "cgroup holds processes or a limit below current usage",
    errno.EACCES: "permission denied (not root, or on v1 not a subset of the parent's "
    "cpuset, or the root cpuset)",
    errno.EPERM: "operation not permitted (not root, or outside a delegated cgroup namespace)",
    errno.ENOENT: "no such file: the controller is not enabled in this cgroup",
}

#: ... on a plain directory: an ordinary file system answering (the files
#: are podnuma's own, so no cgroup reason applies)
_PLAIN_ERRNO_TEXT = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOENT: "no such file or directory",
}

#: ... on either: what is in the way in the tree
_PATH_ERRNO_TEXT = {
    errno.ELOOP: "a symlink is in the way (refusing to follow it out of the root)",
    errno.EXDEV: "the path leads out of the root (refused)",
    errno.ENOTDIR: "a component of the path is not a directory",
    errno.EEXIST: "something that is not a directory is in the way",
    errno.ENAMETOOLONG: "a name or the path is too long for the kernel",
    # open(O_WRONLY | O_NONBLOCK) of a FIFO with no reader, a socket, a device without a driver
    errno.ENXIO: "not a regular file: a FIFO, socket or device file is in its place",
}

#: Why ``rmdir`` of a cgroup no longer planned failed, on a cgroup file system
_RMDIR_TEXT = {
    errno.EBUSY: "it still holds processes",
    errno.ENOTEMPTY: "it holds files or directories podnuma did not write",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}

#: ... on a plain directory
_PLAIN_RMDIR_TEXT = {
    **_RMDIR_TEXT,
    errno.EBUSY: "it is in use (a mount point)",
    errno.EROFS: "read-only file system",
}


def explain_errno(err: OSError, *, cgroupfs: bool, found: str | None = None) -> str:
    """Why a write, open or ``mkdir`` under the root failed, in words.

    ``cgroupfs``: the root is a cgroup file system, whose errors are the
    cgroup code's (ENOSPC: an empty cpuset); on a plain directory they are
    an ordinary file system's (ENOSPC: the disk is full). ``found``: what
    is in the file's place when it is not a regular file (``a FIFO``). A
    refusal of podnuma's own (an ``OSError`` with its own text, from
    :mod:`podnuma.cgroups.beneath`) keeps its text."""
    code = err.errno or 0
    own = bool(err.strerror) and code != 0 and err.strerror != os.strerror(code)
    if found is not None and (code == errno.ENXIO or (own and code == errno.EINVAL)):
        return f"not a regular file: {found} is in its place"
    if own:
        return str(err.strerror)
    texts = _CGROUP_ERRNO_TEXT if cgroupfs else _PLAIN_ERRNO_TEXT
    return texts.get(code) or _PATH_ERRNO_TEXT.get(code) or err.strerror or str(err)


def _found(mode: int) -> str | None:
    """What a directory entry that is not a regular file is, in words."""
    for test, what in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symlink"),
    ):  # fmt: skip
        if test(mode):
            return what
    return None


class CgroupWriteError(InputError):
    """A cgroup write the kernel (or the file system) refused."""


@dataclass(frozen=True)
class Operation:
    """One step of an apply: ``mkdir`` a cgroup, ``write`` a value to a
    file, or ``skip`` a file the kernel does not offer (``detail`` says why).
    ``path`` is relative to the root."""

    action: str
    path: str
    value: str | None = None
    detail: str = ""

    def __str__(self) -> str:
        if self.action == "write":
            return f"write {self.path} {self.value!r}"
        return f"{self.action} {self.path}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class ApplyReport:
    root: Path
    dry_run: bool
    cgroupfs: bool
    operations: list[Operation] = field(default_factory=list)


def is_cgroupfs(path: Path) -> bool:
    """Whether ``path`` is on a cgroup or cgroup2 mount (from
    ``/proc/self/mountinfo``: the longest mount point containing it)."""
    try:
        real = os.path.realpath(path)
        with open("/proc/self/mountinfo", encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return False
    best, fstype = "", ""
    for line in lines:
        left, _, right = line.partition(" - ")
        parts = left.split()
        if len(parts) < 5 or not right:
            continue
        mount = parts[4].replace("\\040", " ")
        if (real == mount or real.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(best):
            best, fstype = mount, right.split()[0]
    return fstype in ("cgroup", "cgroup2")


#: the bytes of a ``cgroup.procs`` or ``tasks`` read to tell whether it
#: lists a process (one longer is taken to list some)
_PROCS_LIMIT = 1 << 16


@dataclass
class _Walk:
    """One cgroup on the stack of :meth:`_Writer.remove_tree`'s walk: its
    entries, the subdirectories still to visit, whether all so far went."""

    rel: str
    entries: list[tuple[str, int]]
    children: list[str]
    next: int = 0
    ok: bool = True


class _Writer:
    def __init__(self, plan: CgroupPlan, root: Path, dry_run: bool) -> None:
        self.mounted: dict[str, bool] = {}
        self.plan = plan
        self.root = root
        self.dry_run = dry_run
        try:
            self.tree = Beneath(root)
        except OSError as err:
            raise InputError(
                f"--root: cannot open: {err.strerror or err}", file=str(root)
            ) from None
        if plan.version == 1:
            # /sys/fs/cgroup itself is a tmpfs holding one mount per controller
            self.cgroupfs = is_cgroupfs(root) or any(
                is_cgroupfs(root / c) for c in V1_CONTROLLERS if self.tree.is_dir(c)
            )
        else:
            self.cgroupfs = is_cgroupfs(root)
        self.report = ApplyReport(root=root, dry_run=dry_run, cgroupfs=self.cgroupfs)
        self.created: list[str] = []  # directories this run made, in order (relative)
        self.created_files: list[str] = []  # plain-directory files this run made
        self.written: dict[str, str] = {}
        #: the bytes of the root's path and a ``/``: what a path under it adds to
        self._root_bytes = len(os.fsencode(os.path.abspath(root))) + 1

    def close(self) -> None:
        self.tree.close()

    # -- paths ---------------------------------------------------------------
    def rel(self, controller: str | None, path: str, name: str | None = None) -> str:
        parts: list[str] = []
        if self.plan.version == 1 and controller is not None:
            parts.append(controller)
        parts += [p for p in path.split("/") if p]
        if name is not None:
            parts.append(name)
        for p in parts:
            problem = name_problem(p)
            if problem is not None:
                raise InputError(f"refusing cgroup path component {short_name(p)!r}: {problem}", path=path)
        return "/".join(parts)

    # -- primitives ------------------------------------------------------------
    def fail(self, err: OSError, rel: str, value: str | None) -> CgroupWriteError:
        """The error of a refused ``mkdir`` (``value`` ``None``) or write,
        the same whether the refusal happened or, in a dry run, was
        foreseen."""
        code = err.errno or 0
        name = errno.errorcode.get(code, str(code))
        found = None
        if value is not None and code in (errno.ENXIO, errno.EINVAL):
            with contextlib.suppress(OSError):
                found = _found(self.tree.lstat(rel).st_mode)
        why = explain_errno(err, cgroupfs=self.cgroupfs, found=found)
        what = "creating the cgroup" if value is None else f"writing {value!r}"
        return CgroupWriteError(f"{what}: {name}: {why}", file=str(self.root / rel))

    def new_parent(self, rel: str) -> bool:
        """Whether the directory ``rel`` is in is one this run created (or, in
        a dry run, would create): nothing can be in the way inside it."""
        return rel.rpartition("/")[0] in self.created

    def mkdir(self, rel: str) -> bool:
        """Create the cgroup ``rel`` (``False``: it is there already). A dry
        run makes the checks the real ``mkdir`` would fail on without
        writing (:meth:`Beneath.check_mkdir`: a symlink or a file in the
        way, a parent that cannot be written) and fails the same way."""
        if rel in self.created or self.tree.is_dir(rel):
            return False
        try:
            if self.dry_run:
                made = self.new_parent(rel) or self.tree.check_mkdir(rel)
            else:
                made = self.tree.mkdir(rel)
        except OSError as err:
            raise self.fail(err, rel, None) from None
        if not made:
            return False
        self.report.operations.append(Operation("mkdir", rel))
        self.created.append(rel)
        return True

    def read(self, rel: str) -> str | None:
        if rel in self.written:  # what this run wrote (all a dry run can know)
            return self.written[rel]
        try:
            return self.tree.read(rel).decode("utf-8", "replace").strip()
        except OSError:
            return None

    def exists(self, rel: str) -> bool:
        return self.tree.exists(rel)

    def is_dir(self, rel: str) -> bool:
        return rel in self.created or self.tree.is_dir(rel)

    def write(self, rel: str, value: str) -> None:
        """Write ``value`` to ``rel`` in one ``write()``. A dry run checks
        what the real open would refuse (:meth:`foresee_write`) and fails
        the same way; what only the kernel can answer (a value it refuses)
        is not foreseen."""
        seen = rel in self.written
        self.report.operations.append(Operation("write", rel, value))
        self.written[rel] = value
        if self.dry_run:
            if not seen:
                self.foresee_write(rel, value)
            return
        try:
            fd, created = self.tree.open_write(
                rel, create=not self.cgroupfs, single_link=not self.cgroupfs
            )
        except OSError as err:
            raise self.fail(err, rel, value) from None
        if created:
            self.created_files.append(rel)
        try:
            data = value.encode() if value else b"\n"
            os.write(fd, data)  # one write(): the kernel applies it whole
            if not self.cgroupfs:
                os.ftruncate(fd, len(data))
        except OSError as err:
            raise self.fail(err, rel, value) from None
        finally:
            os.close(fd)

    def foresee_write(self, rel: str, value: str) -> None:
        """A dry run's :meth:`write`: the :class:`CgroupWriteError` the real
        one would raise where it can be told without writing. On a plain
        directory: what is in the file's place (a file in a directory this
        run creates is new: nothing can be). On a cgroup file system: an
        existing file must be writable; a missing one appears only if its
        controller is enabled by then -- on v2 the apply enables in each
        parent's ``cgroup.subtree_control`` every controller the parent
        offers, so a controller the nearest existing ancestor does not
        offer (its ``cgroup.controllers``) means ``ENOENT``, as the real
        ``open`` would answer."""
        try:
            if not self.cgroupfs:
                if not self.new_parent(rel):
                    self.tree.check_write(rel, create=True, single_link=True)
            elif self.exists(rel):
                self.tree.check_write(rel, create=False, single_link=False)
            elif self.controller_missing(rel):
                raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), rel)
        except OSError as err:
            raise self.fail(err, rel, value) from None

    def controller_missing(self, rel: str) -> bool:
        """v2, cgroup file system: whether the controller of interface file
        ``rel`` (``cpuset`` for ``cpuset.cpus``) will not be enabled in its
        cgroup -- not offered by the nearest ancestor that exists now. (A
        controller the kernel then refuses to enable is not foreseen.)"""
        if self.plan.version != 2:
            return False
        cgroup, _, name = rel.rpartition("/")
        controller = name.partition(".")[0]
        if not cgroup or controller == "cgroup":
            return False  # the root's own files, and the core files every cgroup has
        ancestor = cgroup.rpartition("/")[0]
        while ancestor and ancestor in self.created:
            ancestor = ancestor.rpartition("/")[0]
        offered = self.read(f"{ancestor}/cgroup.controllers" if ancestor else "cgroup.controllers")
        return offered is not None and controller not in offered.split()

    def rollback(self) -> None:
        """Remove what this run created (its cgroups are still empty: nothing
        is attached during an apply), newest first."""
        for f in reversed(self.created_files):
            with contextlib.suppress(OSError):
                self.tree.unlink(f)
        for d in reversed(self.created):
            with contextlib.suppress(OSError):
                self.tree.rmdir(d)

    # -- stale cgroups -----------------------------------------------------------
    def prune(self, keep: bool) -> None:
        """Cgroups of pods the plan no longer has (and containers a planned
        pod no longer has): removed, leaves first, before anything is
        written, so none keeps a cpuset overlapping the new ones. Pods known
        only from a checkpoint (``plan.unplanned``) are left alone. What
        cannot be removed (still populated, or not a cgroup podnuma could
        empty) is reported with the CPUs it keeps."""
        planned = {n.path for n in self.plan.nodes}
        parents = [n.path for n in self.plan.nodes if n.kind in ("node", "qos")]
        pods = [n.path for n in self.plan.nodes if n.kind == "pod"]
        guarded = {f"pod{uid}" for uid in self.plan.unplanned} | {
            f"pod{uid.replace('-', '_')}.slice" for uid in self.plan.unplanned
        }
        controllers: list[str | None] = [None]
        if self.plan.version == 1:
            controllers = [c for c in V1_CONTROLLERS if self.hierarchy(c)]
        stale: list[str] = []
        for path in parents:
            base = path.rpartition("/")[2]
            prefix = "pod" if self.plan.driver == "cgroupfs" else base.removesuffix(".slice") + "-pod"
            for name in self.subdirs(controllers, path):
                child = f"{path}/{name}"
                if child in planned or not name.startswith(prefix):
                    continue
                if self.plan.driver == "systemd" and not name.endswith(".slice"):
                    continue
                if name in guarded or any(name.endswith("-" + g) for g in guarded):
                    continue
                stale.append(child)
        for path in pods:
            for name in self.subdirs(controllers, path):
                if f"{path}/{name}" not in planned:
                    stale.append(f"{path}/{name}")
        if not parents and not pods:
            # without cgroupsPerQOS: the container cgroups the runtime makes
            # under its default parent (k8s.io/<id>), only ids of the form
            # the plans give, not the plan's, not a kept pod's
            guarded_ids = set(self.plan.guarded)
            for name in self.subdirs(controllers, RUNTIME_DEFAULT_PARENT):
                child = f"{RUNTIME_DEFAULT_PARENT}/{name}"
                if child not in planned and is_container_id(name) and name not in guarded_ids:
                    stale.append(child)
        for path in stale:
            for controller in controllers:
                rel = self.rel(controller, path)
                if self.tree.is_dir(rel):
                    self.remove_tree(rel, keep)

    def subdirs(self, controllers: Sequence[str | None], path: str) -> list[str]:
        names: set[str] = set()
        for controller in controllers:
            rel = self.rel(controller, path)
            if not self.tree.is_dir(rel):
                continue
            try:
                entries = self.tree.listdir(rel)
            except OSError:
                continue
            names.update(n for n, mode in entries if stat.S_ISDIR(mode))
        return sorted(names)

    def remove_tree(self, rel: str, keep: bool) -> bool:
        """Remove cgroup ``rel`` and the cgroups below it, leaves first.

        On a cgroup file system ``rmdir`` alone removes a cgroup (its
        interface files are the kernel's). On a plain directory the files
        podnuma writes are removed first, and only them: a directory that
        holds anything else (a file of another name, a FIFO, a symlink, a
        file with other hard links) is left whole and reported as stale,
        with ``--dry-run`` too. A cgroup whose ``cgroup.procs`` (v1: or
        ``tasks``) lists a process stays too, reported as the kernel's
        ``rmdir`` refusal (``EBUSY``), on either and with ``--dry-run``: on a
        plain directory ``cgroup.procs`` is a file podnuma writes
        (:func:`attach`), but one that lists a process is not empty.

        The walk keeps its own stack (no recursion: a tree planted
        thousands of levels deep is no internal error) and holds a bounded
        number of descriptors (:class:`~podnuma.cgroups.beneath.Beneath`).
        As the kubelet (libcontainer's ``RemovePath``, by path) removes a
        tree only as deep as the kernel's ``PATH_MAX`` allows, a cgroup
        whose path (the root's included) reaches it is kept, reported
        ``ENAMETOOLONG``, and so are the cgroups above it."""
        stack: list[_Walk] = []
        if not self._enter(rel, stack):
            return False
        while True:
            top = stack[-1]
            if top.next < len(top.children):
                child = f"{top.rel}/{top.children[top.next]}"
                top.next += 1
                if not self._enter(child, stack):
                    top.ok = False
                continue
            stack.pop()
            removed = self._remove_one(top, keep)
            if not stack:
                return removed
            stack[-1].ok = stack[-1].ok and removed

    def _enter(self, rel: str, stack: list[_Walk]) -> bool:
        """List cgroup ``rel`` and push it on the walk's ``stack``; ``False``
        (it is reported as kept) when it cannot be listed or its path is
        longer than the kernel's limit."""
        if self._root_bytes + len(os.fsencode(rel)) >= PATH_MAX:
            self.keep(rel, OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG)),
                      why=f"its path is {PATH_MAX} bytes or longer (the kubelet's removal goes by path)")
            return False
        try:
            entries = self.tree.listdir(rel)
        except OSError as err:
            self.keep(rel, err)
            return False
        stack.append(_Walk(rel, entries, [n for n, mode in entries if stat.S_ISDIR(mode)]))
        return True

    def _remove_one(self, walk: _Walk, keep: bool) -> bool:
        """Remove (or report) the cgroup ``walk.rel`` once the cgroups below
        it are done (``walk.ok``: all removed)."""
        rel = walk.rel
        cpus = self.read(f"{rel}/cpuset.cpus") if self.plan.version == 2 or rel.startswith("cpuset/") else None
        if keep:
            self.report.operations.append(
                Operation("stale", rel, detail="not in the plan; kept (--keep-stale)" + _cpus_note(cpus))
            )
            return False
        if not walk.ok:
            self.report.operations.append(
                Operation("stale", rel, detail="a cgroup below it stays" + _cpus_note(cpus))
            )
            return False
        if self.holds_processes(rel):
            # what rmdir answers on a cgroup file system, said the same on a
            # plain directory and in a dry run
            self.keep(rel, OSError(errno.EBUSY, os.strerror(errno.EBUSY)), cpus, why=_RMDIR_TEXT[errno.EBUSY])
            return False
        ours: list[str] = []
        if not self.cgroupfs:
            ours, foreign = self.plain_contents(rel, walk.entries)
            if foreign:
                self.keep(rel, OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY)), cpus, foreign)
                return False
        self.report.operations.append(Operation("rmdir", rel, detail="not in the plan"))
        if self.dry_run:
            return True
        try:
            for name in ours:
                self.tree.unlink(f"{rel}/{name}")
            self.tree.rmdir(rel)
        except OSError as err:
            self.report.operations.pop()
            self.keep(rel, err, cpus)
            return False
        return True

    def holds_processes(self, rel: str) -> bool:
        """Whether cgroup ``rel`` lists a process (``cgroup.procs``, and on
        v1 ``tasks``): a cgroup that does cannot be removed -- the kernel's
        ``rmdir`` answers ``EBUSY`` (kernel/cgroup/cgroup.c
        ``cgroup_destroy_locked``). Read, not left to ``rmdir``, so a dry
        run and a plain directory (a copy of a cgroup tree, where
        ``cgroup.procs`` is one of podnuma's own files) say the same. A
        process id is a positive decimal number, as the kernel lists them; a
        list longer than is read is taken to hold some."""
        for name in ("cgroup.procs", "tasks") if self.plan.version == 1 else ("cgroup.procs",):
            where = f"{rel}/{name}"
            if where in self.written:
                text = self.written[where]
            else:
                try:
                    raw = self.tree.read(where, limit=_PROCS_LIMIT + 1)
                except OSError:
                    continue
                if len(raw) > _PROCS_LIMIT:
                    return True
                text = raw.decode("ascii", "replace")
            if any(p.isascii() and p.isdigit() and p.strip("0") for p in text.split()):
                return True
        return False

    def plain_contents(self, rel: str, entries: Sequence[tuple[str, int]]) -> tuple[list[str], list[str]]:
        """A plain directory's entries other than subdirectories: the files
        podnuma writes (regular, of a name its plans write, one link), and
        the rest."""
        ours: list[str] = []
        foreign: list[str] = []
        for name, mode in entries:
            if stat.S_ISDIR(mode):
                continue  # a cgroup below: removed (or reported) on its own
            mine = stat.S_ISREG(mode) and is_written_file(name, self.plan.version)
            if mine:
                try:
                    mine = self.tree.lstat(f"{rel}/{name}").st_nlink == 1
                except OSError:
                    mine = False
            (ours if mine else foreign).append(name)
        return ours, foreign

    def keep(
        self, rel: str, err: OSError, cpus: str | None = None, found: Sequence[str] = (), why: str | None = None,
    ) -> None:
        """Report cgroup ``rel`` as ``stale``: ``err`` the refusal (``why``:
        its explanation, else the errno's), ``found`` the entries in the
        way, ``cpus`` the CPUs it keeps."""
        code = err.errno or 0
        name = errno.errorcode.get(code, str(code))
        texts = _RMDIR_TEXT if self.cgroupfs else _PLAIN_RMDIR_TEXT
        if why is None:
            why = texts.get(code, err.strerror or str(err))
        if found:
            shown = ", ".join(short_name(f) for f in found[:3])
            why += f" ({shown}{f' and {len(found) - 3} more' if len(found) > 3 else ''})"
        self.report.operations.append(
            Operation("stale", rel, detail=f"not in the plan, cannot remove: {name}: {why}{_cpus_note(cpus)}")
        )

    # -- steps ---------------------------------------------------------------
    def ancestors(self, path: str) -> list[str]:
        parts = [p for p in path.split("/") if p]
        return ["/".join(parts[: i + 1]) for i in range(len(parts))]

    def reserved_problem(self, node: CgroupNode) -> str | None:
        """Why the kubelet would not find the reserved cgroup ``node``
        usable (``Validate``), or ``None``."""
        if self.plan.version == 2:
            if not self.tree.is_dir(self.rel(None, node.path)):
                return "does not exist"
            if not self.cgroupfs:
                return None
            supported = {"cpu", "cpuset", "memory", "hugetlb", "pids"}
            offered = set((self.read(self.rel(None, "", "cgroup.controllers")) or "").split())
            enabled = set((self.read(self.rel(None, node.path, "cgroup.controllers")) or "").split())
            missing = sorted((supported & offered) - enabled)
            return f"has some missing controllers: {', '.join(missing)}" if missing else None
        if self.cgroupfs:
            controllers = [c for c in ("cpu", "cpuacct", "cpuset", "memory", "pids", "hugetlb", "systemd")
                           if self.hierarchy(c)]  # fmt: skip
        else:
            controllers = sorted(self.controllers_for(node))
        absent = [f"{c}/{node.path}" for c in controllers if not self.tree.is_dir(self.rel(c, node.path))]
        return f"has some missing paths: {', '.join(absent)}" if absent else None

    def controllers_for(self, node: CgroupNode) -> set[str]:
        return {f.controller for f in node.files} | {"cpuset"}

    def ensure_v2(self, node: CgroupNode) -> None:
        for path in self.ancestors(node.path):
            parent = path.rpartition("/")[0]
            self.enable_subtree(parent)
            self.mkdir(self.rel(None, path))

    def enable_subtree(self, parent: str) -> None:
        if not self.cgroupfs:
            return
        offered = (self.read(self.rel(None, parent, "cgroup.controllers")) or "").split()
        enabled = set((self.read(self.rel(None, parent, "cgroup.subtree_control")) or "").split())
        missing = [c for c in offered if c not in enabled]
        if not missing:
            return
        rel = self.rel(None, parent, "cgroup.subtree_control")
        try:
            self.write(rel, " ".join(f"+{c}" for c in missing))
        except CgroupWriteError:
            # runc (fs2/create.go): all at once, else one by one, ignoring refusals
            for c in missing:
                with contextlib.suppress(CgroupWriteError):
                    self.write(rel, f"+{c}")

    def ensure_v1(self, node: CgroupNode) -> None:
        for controller in sorted(self.controllers_for(node)):
            if not self.hierarchy(controller):
                continue
            if not self.cgroupfs:
                self.mkdir(controller)  # a plain directory: lay out the hierarchy too
            for path in self.ancestors(node.path):
                made = self.mkdir(self.rel(controller, path))
                if made and controller == "cpuset" and path != node.path:
                    self.inherit_cpuset(path)

    def hierarchy(self, controller: str) -> bool:
        """v1: is that controller's hierarchy under the root? (Always, for a
        plain directory: it is created.)"""
        if not self.cgroupfs:
            return True
        if controller not in self.mounted:
            self.mounted[controller] = self.tree.is_dir(controller) and is_cgroupfs(self.root / controller)
        return self.mounted[controller]

    def inherit_cpuset(self, path: str) -> None:
        """runc's ``cpusetEnsureParent`` on v1: an empty cpuset takes its
        parent's CPUs and memory nodes (mems first)."""
        parent = path.rpartition("/")[0]
        for name in ("cpuset.mems", "cpuset.cpus"):
            mine = self.read(self.rel("cpuset", path, name))
            if mine:
                continue
            value = self.read(self.rel("cpuset", parent, name))
            if value is None and not self.cgroupfs:
                continue  # a plain directory without the parent's file: nothing to copy
            if value is None:
                value = ""
            self.write(self.rel("cpuset", path, name), value)

    def cpuset_rel(self, node: CgroupNode, name: str) -> str:
        return self.rel("cpuset" if self.plan.version == 1 else None, node.path, name)

    def planned_set(self, node: CgroupNode, name: str) -> CPUSet | None:
        if name == "cpuset.cpus":
            return node.cpus
        if node.mems is None:
            return None
        return CPUSet(node.mems)

    def current_set(self, node: CgroupNode, name: str) -> CPUSet | None:
        text = self.read(self.cpuset_rel(node, name))
        if text is None:
            return None
        try:
            return CPUSet.parse(text)
        except CPUSetParseError:
            return None

    def cpusets(self, nodes: Sequence[CgroupNode]) -> None:
        """Widen top-down (current ∪ planned), then narrow bottom-up."""
        if self.plan.version == 1 and not self.hierarchy("cpuset"):
            return
        narrow: list[tuple[CgroupNode, str, CPUSet]] = []
        for node in nodes:
            for name in ("cpuset.mems", "cpuset.cpus"):
                want = self.planned_set(node, name)
                if want is None:
                    continue
                cur = self.current_set(node, name)
                if not cur:
                    self.write(self.cpuset_rel(node, name), str(want))
                    continue
                if not want.is_subset_of(cur):
                    cur = cur.union(want)
                    self.write(self.cpuset_rel(node, name), str(cur))
                if cur != want:
                    narrow.append((node, name, want))
        for node, name, want in reversed(narrow):
            self.write(self.cpuset_rel(node, name), str(want))

    def files(self, node: CgroupNode) -> None:
        pending = [f for f in node.files if f.controller != "cpuset"]  # cpusets: done in cpusets()
        i = 0
        while i < len(pending):
            f = pending[i]
            i += 1
            controller = f.controller if self.plan.version == 1 else None
            if self.plan.version == 1 and not self.hierarchy(f.controller):
                self.report.operations.append(
                    Operation("skip", self.rel(None, node.path, f.name), detail=f"no {f.controller} hierarchy")
                )
                continue
            rel = self.rel(controller, node.path, f.name)
            if self.cgroupfs and not self.exists(rel) and (f.optional or f.controller == "hugetlb"):
                self.report.operations.append(Operation("skip", rel, detail="not offered by the kernel"))
                continue
            if f.optional and not self.cgroupfs:
                self.report.operations.append(Operation("skip", rel, detail="optional file"))
                continue
            following = pending[i] if i < len(pending) else None
            if f.name == "cpu.cfs_period_us" and following is not None and following.name == "cpu.cfs_quota_us":
                # runc (fs/cpu.go): a period the kernel refuses with EINVAL
                # (the current quota/period ratio would break the parent's)
                # is written again after the quota.
                quota_rel = self.rel(controller, node.path, following.name)
                try:
                    self.write(rel, f.value)
                except CgroupWriteError as err:
                    if ": EINVAL: " not in err.message:
                        raise
                    self.report.operations.pop()
                    self.write(quota_rel, following.value)
                    self.write(rel, f.value)
                    i += 1
                continue
            self.write(rel, f.value)


def validate_plan(plan: CgroupPlan) -> None:
    """Every name the apply would use, checked before the first write: plain
    names the kernel accepts (no ``/``, ``.``, ``..``, NUL or newline, at
    most 255 bytes, whole paths under 4096 bytes). :class:`InputError`
    naming the cgroup (and, for a pod's cgroups, the pod and its
    ``metadata.uid``)."""
    for i, node in enumerate(plan.nodes):
        where = f"cgroups[{i}]"
        if node.pod is not None:
            where = "metadata.uid"
        names = node.path.split("/") if node.path else []  # "": the root itself (a named "/")
        names += [f.name for f in node.files]
        for name in names:
            problem = name_problem(name)
            if problem is None:
                continue
            whose = f"pod {node.pod}: " if node.pod is not None else ""
            raise InputError(f"{whose}cgroup name {short_name(name)!r} {problem}", path=where)
        longest = len(os.fsencode(node.path)) + max((len(f.name) for f in node.files), default=0) + 16
        if longest >= PATH_MAX:
            whose = f"pod {node.pod}: " if node.pod is not None else ""
            raise InputError(
                f"{whose}cgroup path {short_name(node.path)!r} is too long ({longest} bytes with the "
                f"controller and file names; the kernel's limit is {PATH_MAX - 1})",
                path=where,
            )


def apply_plan(
    plan: CgroupPlan, root: Path, *, dry_run: bool = False, keep_stale: bool = False,
    option: str = "--root",
) -> ApplyReport:
    """Write ``plan`` under ``root`` (see the module docstring for the
    order); with ``dry_run`` only report what would be done.

    The whole plan is validated before anything is written. Cgroups of pods
    no longer in the plan are removed first (``keep_stale``: only reported);
    what cannot be removed is reported (``stale`` operations). A failed
    write removes the cgroups and files this apply created (cgroups it
    removed as stale stay removed: they were empty). ``option``: how a
    root that cannot be used is named (``cgroups apply --root``, the
    agent's ``--cgroup-root``)."""
    check_directory(root, option)
    validate_plan(plan)
    w = _Writer(plan, root, dry_run)
    try:
        made = {n.path for n in plan.nodes if n.kind != "reserved"}  # (a reserved one may be the kubelet's own)
        for i, node in enumerate(plan.nodes):
            problem = w.reserved_problem(node) if node.kind == "reserved" and node.path not in made else None
            if problem is not None:
                raise InputError(
                    f"the reserved cgroup /{node.path} {problem} under {root}: the kubelet does not start "
                    "without it (it never creates it; enforceNodeAllocatable names it), and podnuma "
                    "does not create it either",
                    path=f"cgroups[{i}]",
                )
        w.prune(keep_stale)
        for node in plan.nodes:
            if node.kind == "reserved":
                continue  # (there, checked above)
            if plan.version == 2:
                w.ensure_v2(node)
            else:
                w.ensure_v1(node)
                if node.cpus is None or node.mems is None:
                    w.inherit_cpuset(node.path)
        w.cpusets(plan.nodes)
        for node in plan.nodes:
            w.files(node)
    except CgroupWriteError as err:
        if dry_run or not (w.created or w.created_files):
            raise
        w.rollback()
        raise CgroupWriteError(
            f"{err.message} (the {len(w.created)} cgroups this apply created were removed again)",
            file=err.file,
        ) from None
    finally:
        w.close()
    return w.report


def attach(plan: CgroupPlan, root: Path, path: str, pid: int) -> None:
    """Move process ``pid`` into the cgroup at ``path`` (every v1 hierarchy
    the plan uses; the one v2 tree). Done after :func:`apply_plan`, so the
    cpuset is complete when the task arrives."""
    w = _Writer(plan, root, False)
    try:
        node = plan.node(path)
        if plan.version == 2:
            w.write(w.rel(None, path, "cgroup.procs"), str(pid))
            return
        for controller in sorted(w.controllers_for(node)):
            if w.hierarchy(controller) and w.tree.is_dir(w.rel(controller, path)):
                w.write(w.rel(controller, path, "cgroup.procs"), str(pid))
    finally:
        w.close()


def remove_plan(plan: CgroupPlan, root: Path, *, extra: Iterable[str] = ()) -> list[str]:
    """Remove the plan's cgroups (and ``extra`` relative paths), leaves
    first, each with the cgroups below it (as the kubelet's ``RemovePath``
    removes sub-cgroups first; the walk of :meth:`_Writer.remove_tree`,
    without recursion), then their ancestors that are left empty; returns
    what could not be removed: still populated (a ``cgroup.procs`` or v1
    ``tasks`` listing a process, on a plain directory too:
    :meth:`_Writer.holds_processes`), holding what podnuma did not write,
    or above a cgroup that stays."""
    w = _Writer(plan, root, False)
    try:
        own: set[str] = set(extra)
        paths: set[str] = set(extra)
        for node in plan.nodes:
            if node.kind != "reserved":  # (the kubelet's to update, never podnuma's to remove)
                own.add(node.path)
                paths.update(w.ancestors(node.path))
        left: list[str] = []
        prefixes = list(V1_CONTROLLERS) if plan.version == 1 else [None]
        for path in sorted(paths, key=lambda p: (-p.count("/"), p)):
            for controller in prefixes:
                rel = w.rel(controller, path)
                if not w.tree.is_dir(rel):
                    continue
                if path in own:
                    if not w.remove_tree(rel, False):
                        left.append(rel)
                    continue
                # an ancestor only: removed when nothing is below it any more
                if w.holds_processes(rel):
                    left.append(rel)  # still populated: rmdir's EBUSY
                    continue
                try:
                    if not w.cgroupfs:
                        # a plain directory: only podnuma's files go, and
                        # none while anything else is there
                        ours, foreign = w.plain_contents(rel, w.tree.listdir(rel))
                        if foreign:
                            left.append(rel)
                            continue
                        for name in ours:
                            w.tree.unlink(f"{rel}/{name}")
                    w.tree.rmdir(rel)
                except OSError:
                    left.append(rel)
        return left
    finally:
        w.close()


def _cpus_note(cpus: str | None) -> str:
    return f"; it keeps cpuset.cpus {cpus}" if cpus else ""

"""The ``sysfs`` node form: read a copy of ``/sys`` the way cadvisor does.

Mirrors github.com/google/cadvisor ``utils/sysinfo/sysinfo.go``
(``GetNodesInfo``, ``getCPUTopology``, ``getCoresInfo``, ``addCacheInfo``,
``getNodeMemInfo``, ``GetHugePagesInfo``, ``getDistances``) and
``utils/sysfs/sysfs.go`` (file formats, ``IsCPUOnline``), building the
``MachineInfo`` that ``machineinfo.discover`` turns into the kubelet's CPU
topology, so this form and the ``machineInfo`` form cannot disagree.

What cadvisor does, and so what this does:

- NUMA nodes are the ``devices/system/node/node*[0-9]`` directories (sorted by
  name, as Go's ``filepath.Glob``); a node's CPUs are its ``cpuN`` entries,
  whose ``topology`` files are opened through the entry (a link to
  ``../../cpu/cpuM`` on a live kernel): a looping link, or one to a file, is
  an error; one to nothing, or to a directory without them, drops the CPU.
  A link leading out of the tree is refused (the host's files are never
  read for the copy's).
  Offline CPUs (not in ``devices/system/cpu/online``; all are online when
  that file is absent) are left out; CPUs without ``topology/core_id`` or
  ``topology/physical_package_id`` are skipped.
- Threads are grouped into cores by (``core_id``, ``physical_package_id``)
  within a node (plus ``book_id``/``drawer_id`` where those files exist, i.e.
  on s390x).
- Caches of level > 2 (read from the core's first thread,
  ``cache/index*``): when one is shared by exactly as many CPUs as the node
  has threads (``len(cores) * threads of this core``) it is a node cache,
  otherwise an uncore cache of the core. So an L3 spanning a whole NUMA node
  gives no uncore cache and the kubelet falls back to the socket id. A cache
  directory that cannot be read (e.g. no ``id`` file, as on arm64 guests
  and s390x) silently ends cache discovery for the rest of that node.
- Node memory is ``MemTotal`` of ``nodeN/meminfo`` (0 when the file is
  missing); hugepage pools come from ``nodeN/hugepages/hugepages-<KiB>kB/
  nr_hugepages``; distances from ``nodeN/distance``.
- The machine's memory capacity (what the kubelet reports as the node's
  memory capacity and sizes node allocatable and the kubepods cgroup from)
  is ``MemTotal`` of ``/proc/meminfo`` (cadvisor ``machine.go``
  ``GetMachineMemoryCapacity``), read from the ``proc/meminfo`` beside the
  sysfs tree (``/proc/meminfo`` for ``/sys``; ``ROOT/proc/meminfo`` for a
  snapshot holding ``sys/`` and ``proc/``). It can differ from the sum of
  the nodes' MemTotal (some virtual machines report less memory per node
  than in all). Without that file, the sum of the nodes' memory stands in.
- Without NUMA node directories, cadvisor makes one node per physical
  package (node id = package id) with no memory, and its CPU count is the
  number of ``cpu*`` directories, offline ones included.

Deviations, all for copies of ``/sys`` that a live kernel never produces:
``NumSockets`` is the number of distinct package ids of online CPUs (cadvisor
counts ``physical id`` in ``/proc/cpuinfo``, which lists online CPUs only);
when ``devices/system/cpu/online`` is missing, a per-CPU ``cpuN/online``
holding ``0`` marks that CPU offline; a node directory without ``cpuN``
entries takes its CPUs from ``cpulist``; an unreadable ``cpu/online`` list
is an error (cadvisor would treat every CPU as offline), and so is a bad
entry of the list reached before an entry holding the CPU asked about
(cadvisor walks the list per CPU and counts that CPU offline; CPUs held by
an earlier entry are online). ``root`` may also
be a directory holding ``sys/``.

Figures past what a machine holds are cadvisor's and the kubelet's
arithmetic, not errors (reproduced quirks): a ``MemTotal`` of 2^54 kB or
more is multiplied by 1024 in a uint64 and wraps (past 2^64-1 kB it is
refused, as ``strconv.ParseUint`` refuses it); the machine's memory summed
over the nodes and the machine's huge pages summed over the nodes wrap at
2^64 too; a huge page pool of 2^63 bytes or more is kept, and the kubelet
turns it into a negative capacity (``int64(...)``, see
``podnuma.cm.container_manager``). ``nr_hugepages`` is read as cadvisor
reads it: ``strings.TrimSpace`` then ``fmt.Sscanf("%d")`` into a uint64
(``podnuma.golang.fmtscan``); a cache's ``id``, ``size`` and ``level`` are
scanned the same way without the trimming, so a leading newline there
makes the cache unreadable. Files cadvisor trims (``core_id``,
``physical_package_id``, ``distance``, each ``shared_cpu_map`` word, a
cache's ``type``) are trimmed as ``strings.TrimSpace`` trims (not as
Python's ``strip``, which also takes U+001C-U+001F).
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from fnmatch import fnmatchcase
from pathlib import Path

from podnuma.errors import InputError
from podnuma.golang.fmtscan import ScanError, go_trim_space, sscanf_int
from podnuma.golang.strconv import go_quote
from podnuma.inputs.discover.machineinfo import (
    Cache,
    Core,
    HugePagesInfo,
    MachineInfo,
    MachineInfoNode,
    build_machine,
    machine_hugepages,
)
from podnuma.machine.cpuset import CPUSet, CPUSetParseError
from podnuma.machine.topology import Machine

__all__ = ["read_sysfs", "load_sysfs", "offline_cpus"]

_INT = re.compile(r"[+-]?[0-9]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
# (Go's \s is [\t\n\f\r ]: Python's would take \v and Unicode spaces too)
_MEMTOTAL = re.compile(r"MemTotal:[\t\n\f\r ]*([0-9]+) kB")
_CPU_NAME = re.compile(r"cpu([0-9]+)")
_NODE_NAME = re.compile(r"node([0-9]+)")
_UINT64_MAX = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1
_LIST_ID = re.compile(r"[0-9]+")
_UINT16_MAX = 0xFFFF


class _OnlineList:
    """``devices/system/cpu/online`` as cadvisor (v0.60.5, ``utils/sysfs``
    ``isCPUOnline``) reads it for one CPU: the comma-separated entries in
    order, each a CPU id or a ``lo-hi`` range parsed as uint16s; the CPU is
    online at the first entry holding it, so a bad entry only matters to
    the CPUs it comes before. The CPU's id is its directory number cut to a
    uint16 (cpu65536 reads as CPU 0); a number past int64 is offline.

    The entries before the first bad one are kept as sorted, merged ranges
    (a CPU's answer does not depend on which of them holds it)."""

    def __init__(self, file: Path, text: str) -> None:
        self.file = file
        self.bad: str | None = None
        ranges: list[tuple[int, int]] = []
        for entry in go_trim_space(text).split(","):
            parts = entry.split("-", 2)
            if len(parts) == 3:
                self.bad = f"entry {_shown(entry)} has more than one '-'"
                break
            bounds = [self._id(p) for p in parts]
            lo, hi = bounds[0], bounds[-1]
            if lo is None or hi is None:
                self.bad = f"entry {_shown(entry)} is not a CPU id or range of CPU ids (0-{_UINT16_MAX})"
                break
            if lo > hi:
                self.bad = f"entry {_shown(entry)} is a range whose start is past its end"
                break
            ranges.append((lo, hi))
        ranges.sort()
        self.starts: list[int] = []
        self.ends: list[int] = []
        for lo, hi in ranges:
            if self.ends and lo <= self.ends[-1] + 1:
                self.ends[-1] = max(self.ends[-1], hi)
            else:
                self.starts.append(lo)
                self.ends.append(hi)

    @staticmethod
    def _id(text: str) -> int | None:
        """``strconv.ParseUint(text, 10, 16)``, ``None`` on its error."""
        if not _LIST_ID.fullmatch(text):
            return None
        value = int(text)
        return value if value <= _UINT16_MAX else None

    def holds(self, cpu: int) -> bool:
        """Whether cadvisor finds ``cpu`` online; an ``InputError`` where it
        reaches the bad entry first (cadvisor would count the CPU offline,
        a deviation for copies of sysfs a live kernel never writes)."""
        if cpu > _INT64_MAX:  # (strconv.Atoi fails: offline)
            return False
        cid = cpu & _UINT16_MAX
        i = bisect.bisect_right(self.starts, cid) - 1
        if i >= 0 and cid <= self.ends[i]:
            return True
        if self.bad is not None:
            raise _err(f"invalid online CPU list: {self.bad}, before any entry holding CPU {cpu}", self.file)
        return False


class _CacheUnreadable(Exception):
    """A cache attribute is missing or malformed (cadvisor ignores the rest of the node)."""


def _err(message: str, file: Path) -> InputError:
    return InputError(message, file=str(file))


def _glob(directory: Path, pattern: str) -> list[Path]:
    """Go ``filepath.Glob(dir/pattern)``: matching names, sorted lexically."""
    try:
        names = sorted(p.name for p in directory.iterdir())
    except OSError:
        return []
    return [directory / n for n in names if fnmatchcase(n, pattern)]


def _read(file: Path) -> str | None:
    """File content, or ``None`` when it does not exist; within the inputs'
    byte limit (a copy of sysfs is an input: a link in it to ``/dev/zero``
    is refused, not read until memory runs out)."""
    from podnuma.inputs.documents import read_limited
    from podnuma.inputs.limits import DEFAULT_LIMITS

    try:
        return read_limited(file, DEFAULT_LIMITS.max_bytes).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as err:
        raise _err(f"cannot read: {err.strerror or err}", file) from None


def _read_through(file: Path, resolved: str, root: Path, shown_root: Path) -> tuple[str | None, Path]:
    """A file cadvisor opens by a path that goes through links of the tree
    (a NUMA node's ``cpuN`` entry): the system follows them as Go's
    ``os.ReadFile`` does, so a link loop is an error (ELOOP), as is a file on
    the way where a directory should be (ENOTDIR: not "does not exist" for
    Go's ``os.IsNotExist``); only a missing file is ``None``. A path that
    resolves out of the tree (``resolved``, the file's path with its links
    resolved, not under ``root``, also resolved) is refused: a copy of sysfs
    is read, never the files of the machine podnuma runs on.

    Returns the content and the file that holds it, named under
    ``shown_root`` (the tree as given), for an error about what it says."""
    if os.path.commonpath([resolved, str(root)]) != str(root):
        raise _err(f"leads out of the sysfs tree (to {_shown(resolved)}) through a symbolic link", file)
    from podnuma.inputs.documents import read_limited
    from podnuma.inputs.limits import DEFAULT_LIMITS

    holder = shown_root / os.path.relpath(resolved, root)
    try:
        return read_limited(file, DEFAULT_LIMITS.max_bytes).decode("utf-8", errors="replace"), holder
    except FileNotFoundError:
        return None, holder
    except OSError as err:
        why = err.strerror or str(err)
        raise _err(f"cannot read: {why[:1].lower()}{why[1:]}", file) from None  # (Go's words: lower case)


def _int64(digits: str) -> int | None:
    """``digits`` (``[+-]?[0-9]+``) as a Go ``int`` (64 bits), ``None`` when
    out of range. The value is not converted when its digits alone show
    that it is out of range: a file of a million digits is no work (and
    Python refuses to convert more than 4300)."""
    if len(digits.lstrip("+-").lstrip("0")) > 19:
        return None
    n = int(digits)
    return n if -(2**63) <= n < 2**63 else None


def _uint64(digits: str) -> int | None:
    """``strconv.ParseUint(digits, 10, 64)``: ASCII digits only (no sign, no
    Unicode digit that ``str.isdigit`` takes), ``None`` when not a number or
    past 2^64-1 (not converted when its length alone shows it: Python
    refuses more than 4300 digits)."""
    if not digits.isascii() or not digits.isdigit() or len(digits.lstrip("0")) > 20:
        return None
    n = int(digits)
    return n if n <= _UINT64_MAX else None


def _shown(value: str) -> str:
    """``value`` for a message: its first 40 characters when longer."""
    return repr(value) if len(value) <= 40 else f"{value[:40]!r}... ({len(value)} characters)"


def _atoi(file: Path, text: str) -> int:
    """``strconv.Atoi`` of the trimmed content."""
    value = go_trim_space(text)
    if not _INT.fullmatch(value):
        raise _err(f"invalid integer {_shown(value)}", file)
    n = _int64(value)
    if n is None:  # (Go's int, as Atoi parses it)
        raise _err(f"invalid integer {_shown(value)}: value out of range", file)
    return n


def _memtotal_bytes(digits: str, file: Path) -> int:
    """A ``MemTotal`` figure (kB, decimal digits) in bytes, as cadvisor reads
    it (``getNodeMemInfo`` in utils/sysinfo/sysinfo.go, ``parseCapacity`` in
    machine/machine.go): ``strconv.ParseUint(digits, 10, 64)``, whose error
    past 2^64-1 stops cadvisor, then times 1024 in a uint64, which wraps
    from 2^54 kB on (reproduced quirk: cadvisor hands the kubelet the
    wrapped figure)."""
    kb = _uint64(digits)
    if kb is None:
        raise _err(f"MemTotal {_shown(digits)} kB: value out of range "
                   "(cadvisor reads it with strconv.ParseUint as a uint64)", file)
    return kb * 1024 & _UINT64_MAX


class _CoreBuilder:
    id: int
    socket_id: int
    book_id: str
    drawer_id: str
    threads: list[int]
    caches: list[Cache]
    uncore_caches: list[Cache]

    def __init__(
        self,
        id: int,
        socket_id: int,
        book_id: str,
        drawer_id: str,
        threads: list[int] | None = None,
        caches: list[Cache] | None = None,
        uncore_caches: list[Cache] | None = None,
    ) -> None:
        self.id = id
        self.socket_id = socket_id
        self.book_id = book_id
        self.drawer_id = drawer_id
        self.threads = list() if threads is None else threads
        self.caches = list() if caches is None else caches
        self.uncore_caches = list() if uncore_caches is None else uncore_caches

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(id={self.id!r}, socket_id={self.socket_id!r}, book_id={self.book_id!r}, drawer_id={self.drawer_id!r}, threads={self.threads!r}, caches={self.caches!r}, uncore_caches={self.uncore_caches!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _CoreBuilder) or other.__class__ is not self.__class__:
            return False
        return (self.id, self.socket_id, self.book_id, self.drawer_id, self.threads, self.caches, self.uncore_caches) == (other.id, other.socket_id, other.book_id, other.drawer_id, other.threads, other.caches, other.uncore_caches)

    def freeze(self) -> Core:
        return Core(
            id=self.id,
            threads=tuple(self.threads),
            socket_id=self.socket_id,
            caches=tuple(self.caches),
            uncore_caches=tuple(self.uncore_caches),
            book_id=self.book_id,
            drawer_id=self.drawer_id,
        )


class _SysFs:
    def __init__(self, root: Path) -> None:
        if not (root / "devices" / "system").is_dir() and (root / "sys" / "devices" / "system").is_dir():
            root = root / "sys"
        if not (root / "devices" / "system").is_dir():
            try:
                st = root.stat()
            except OSError as e:
                raise _err(f"cannot read: {e.strerror or e}", root) from None
            if not stat.S_ISDIR(st.st_mode):
                raise _err("not a directory (a copy of /sys is a directory tree)", root)
            raise _err("not a sysfs root: devices/system is missing", root)
        self.root = root
        self.resolved_root = Path(os.path.realpath(root))
        self._topology_dirs: dict[Path, str] = {}
        self.meminfo = root.parent / "proc" / "meminfo"
        self.cpu_root = root / "devices" / "system" / "cpu"
        self.node_root = root / "devices" / "system" / "node"
        self.online = self._online_list()

    def machine_memory(self, nodes: list[MachineInfoNode]) -> int:
        """``MemTotal`` of the ``proc/meminfo`` beside the tree, in bytes
        (cadvisor multiplies the kB figure by 1024); else the nodes' sum."""
        text = _read(self.meminfo)
        if text is not None:
            m = _MEMTOTAL.search(text)
            if m is None:
                raise _err("failed to match MemTotal in meminfo", self.meminfo)
            return _memtotal_bytes(m.group(1), self.meminfo)
        return sum(n.memory for n in nodes) & _UINT64_MAX  # (a uint64 sum)

    # -- CPUs -------------------------------------------------------------------
    def _online_list(self) -> _OnlineList | None:
        file = self.cpu_root / "online"
        text = _read(file)
        if text is None:
            return None
        if not go_trim_space(text):
            raise _err("empty online CPU list", file)
        return _OnlineList(file, text)

    def cpu_dir(self, cpu: int) -> Path:
        return self.cpu_root / f"cpu{cpu}"

    def is_online(self, cpu: int) -> bool:
        if self.online is not None:
            return self.online.holds(cpu)
        # Deviation (snapshot copies without cpu/online): honour cpuN/online.
        text = _read(self.cpu_dir(cpu) / "online")
        return text is None or text.strip() != "0"

    def topology_value(self, cpu: int, name: str) -> int | None:
        file = self.cpu_dir(cpu) / "topology" / name
        text = _read(file)
        return None if text is None else _atoi(file, text)

    def path_topology_value(self, cpu_path: Path, name: str) -> int | None:
        """A ``topology`` file of the CPU at ``cpu_path`` as cadvisor opens
        it: by that path (a node's ``cpuN`` link is read through)."""
        text, holder = _read_through(cpu_path / "topology" / name, self._resolved(cpu_path, name),
                                     self.resolved_root, self.root)
        return None if text is None else _atoi(holder, text)

    def path_topology_text(self, cpu_path: Path, name: str) -> str | None:
        text, _ = _read_through(cpu_path / "topology" / name, self._resolved(cpu_path, name),
                                self.resolved_root, self.root)
        return None if text is None else go_trim_space(text)

    def _resolved(self, cpu_path: Path, name: str) -> str:
        """``cpu_path/topology/name`` with its links resolved (a loop left
        unresolved: reading it says ELOOP); the directory is resolved once
        per CPU, the file itself only when it is a link."""
        directory = self._topology_dirs.get(cpu_path)
        if directory is None:
            directory = self._topology_dirs[cpu_path] = os.path.realpath(cpu_path / "topology")
        file = os.path.join(directory, name)
        try:
            if stat.S_ISLNK(os.lstat(file).st_mode):
                return os.path.realpath(file)
        except OSError:
            pass  # (missing, or not reachable: the read says which)
        return file

    @staticmethod
    def cpu_id(path: Path) -> int:
        m = _CPU_NAME.fullmatch(path.name)
        if not m:
            raise _err("unexpected format of CPU directory name", path)
        return int(m.group(1))

    # -- cores (getCoresInfo) ---------------------------------------------------
    def cores_info(self, cpus: list[tuple[int, Path]]) -> list[_CoreBuilder]:
        """``getCoresInfo`` of the CPUs given with the path cadvisor reads
        each one's ``topology`` files by (a NUMA node's ``cpuN`` entry)."""
        cores: list[_CoreBuilder] = []
        index: dict[tuple[int, int, str, str], int] = {}
        for cpu, cpu_path in cpus:
            if not self.is_online(cpu):
                continue
            core_id = self.path_topology_value(cpu_path, "core_id")
            if core_id is None:
                continue
            package = self.path_topology_value(cpu_path, "physical_package_id")
            if package is None:
                continue
            book = drawer = ""
            if (cpu_path / "topology" / "book_id").exists():  # s390x levels
                book_text = self.path_topology_text(cpu_path, "book_id")
                drawer_text = self.path_topology_text(cpu_path, "drawer_id")
                if book_text is None or drawer_text is None:
                    continue
                book, drawer = book_text, drawer_text
            key = (core_id, package, book, drawer)
            if key not in index:
                index[key] = len(cores)
                cores.append(_CoreBuilder(core_id, package, book, drawer))
            cores[index[key]].threads.append(cpu)
        return cores

    # -- caches (GetCacheInfo / addCacheInfo) -------------------------------------
    def _cache(self, directory: Path) -> tuple[Cache, int]:
        def scan(name: str, unsigned: bool, literal: str = "") -> int:
            # fmt.Sscanf of the file as it is (not trimmed): the id and the
            # level into an int, the size ("%dK") into a uint64
            text = _read(directory / name)
            if text is None:
                raise _CacheUnreadable
            try:
                return sscanf_int(text, unsigned=unsigned, literal=literal)
            except ScanError:
                raise _CacheUnreadable from None

        cache_id = scan("id", False)
        size = scan("size", True, "K") * 1024 & _UINT64_MAX  # (a uint64, times 1024)
        level = scan("level", False)
        cache_type = _read(directory / "type")
        cpu_map = _read(directory / "shared_cpu_map")
        if cache_type is None or cpu_map is None:
            raise _CacheUnreadable
        count = 0
        for chunk in cpu_map.split(","):
            # strconv.ParseUint(strings.TrimSpace(mask), 16, 64) (getCPUCount):
            # ASCII hex digits only (no sign, prefix, underscore or Unicode
            # digit, which Python's int() would take), at most 2^64-1
            chunk = go_trim_space(chunk)
            if not _HEX.fullmatch(chunk) or len(chunk.lstrip("0")) > 16:
                raise _CacheUnreadable
            count += int(chunk, 16).bit_count()
        return Cache(id=cache_id, size=size, type=go_trim_space(cache_type), level=level), count

    def add_cache_info(self, cores: list[_CoreBuilder]) -> list[Cache]:
        node_caches: list[Cache] = []
        try:
            for core in cores:
                cache_dir = self.cpu_dir(core.threads[0]) / "cache"
                if not cache_dir.is_dir():
                    raise _CacheUnreadable
                threads_per_core = len(core.threads)
                threads_per_node = len(cores) * threads_per_core
                for entry in _glob(cache_dir, "index*"):
                    cache, cpus = self._cache(entry)
                    if cache.level > 2:
                        if cpus == threads_per_node:
                            if cache not in node_caches:
                                node_caches.append(cache)
                        elif cache not in core.uncore_caches:
                            core.uncore_caches.append(cache)
                    elif cpus == threads_per_core:
                        core.caches.append(cache)
        except _CacheUnreadable:
            pass  # cadvisor logs "Found node without cache information" and goes on
        return node_caches

    # -- NUMA node files ----------------------------------------------------------
    @staticmethod
    def node_memory(node_dir: Path) -> int:
        file = node_dir / "meminfo"
        text = _read(file)
        if text is None:
            return 0
        m = _MEMTOTAL.search(text.strip())
        if m is None:
            raise _err("failed to match MemTotal in node meminfo", file)
        return _memtotal_bytes(m.group(1), file)

    @staticmethod
    def hugepages(directory: Path) -> tuple[HugePagesInfo, ...]:
        try:
            entries = sorted(p.name for p in directory.iterdir())
        except OSError:
            return ()  # hugepages disabled: not an error for cadvisor
        out = []
        for name in entries:
            parts = name.split("-")
            size_text = parts[1].split("kB")[0] if len(parts) > 1 else ""
            size = _uint64(size_text)
            if size is None:
                raise _err("cannot parse the page size from the directory name", directory / name)
            file = directory / name / "nr_hugepages"
            text = _read(file)
            if text is None:
                raise _err("missing nr_hugepages", file)
            # GetHugePagesNr trims the content, then Sscanf("%d") into a
            # uint64: a sign, no digit or past 2^64-1 is an error
            trimmed = go_trim_space(text)
            try:
                pages = sscanf_int(trimmed, unsigned=True)
            except ScanError as err:
                shown = go_quote(trimmed) if len(trimmed) <= 40 else _shown(trimmed)
                reason = str(err) if len(str(err)) <= 80 else "value out of range"
                raise _err(f"could not parse file nr_hugepage for {name}, contents {shown} ({reason})",
                           file) from None
            out.append(HugePagesInfo(page_size=size, num_pages=pages))
        return tuple(out)

    @staticmethod
    def distances(node_dir: Path) -> tuple[int, ...] | None:
        file = node_dir / "distance"
        text = _read(file)
        if text is None:
            return None
        out = []
        for token in go_trim_space(text).split(" "):
            distance = _uint64(token)  # (strconv.ParseUint(token, 10, 64))
            if distance is None:
                raise _err(f"cannot convert {_shown(token)} to int", file)
            out.append(distance)
        return tuple(out)

    # -- whole machine ------------------------------------------------------------
    def node_cpus(self, node_dir: Path) -> list[int]:
        return [cpu for cpu, _ in self.node_cpu_paths(node_dir)]

    def node_cpu_paths(self, node_dir: Path) -> list[tuple[int, Path]]:
        """A node's CPUs, each with the path its topology is read by: the
        node's ``cpuN`` entries (links into ``devices/system/cpu`` on a live
        kernel, read through as cadvisor does); without any, the ``cpulist``
        CPUs at ``devices/system/cpu/cpuN``."""
        links = [(self.cpu_id(p), p) for p in _glob(node_dir, "cpu*[0-9]")]
        if links:
            return links
        file = node_dir / "cpulist"
        text = _read(file)
        if text is None or not text.strip():
            return []
        try:
            return [(cpu, self.cpu_dir(cpu)) for cpu in CPUSet.parse(text.strip()).list()]
        except CPUSetParseError as err:
            raise _err(f"invalid CPU list: {err}", file) from None

    def nodes_info(self) -> tuple[list[MachineInfoNode], int]:
        """``GetNodesInfo``: the topology and the logical CPU count."""
        node_dirs = _glob(self.node_root, "node*[0-9]")
        if not node_dirs:
            return self.cpu_topology()
        nodes = []
        count = 0
        for node_dir in node_dirs:
            m = _NODE_NAME.fullmatch(node_dir.name)
            if m is None:
                raise _err("unexpected format of NUMA node directory name", node_dir)
            cores = self.cores_info(self.node_cpu_paths(node_dir))
            count += sum(len(c.threads) for c in cores)
            node_caches = self.add_cache_info(cores)
            nodes.append(
                MachineInfoNode(
                    id=int(m.group(1)),
                    memory=self.node_memory(node_dir),
                    hugepages=self.hugepages(node_dir / "hugepages"),
                    cores=tuple(c.freeze() for c in cores),
                    caches=tuple(node_caches),
                    distances=self.distances(node_dir),
                )
            )
        return nodes, count

    def cpu_topology(self) -> tuple[list[MachineInfoNode], int]:
        """``getCPUTopology``: no NUMA information, one node per package."""
        cpu_dirs = _glob(self.cpu_root, "cpu*[0-9]")
        if not cpu_dirs:
            raise _err("no CPU is available", self.cpu_root)
        by_package: dict[int, list[tuple[int, Path]]] = {}
        for path in cpu_dirs:
            cpu = self.cpu_id(path)
            package = self.path_topology_value(path, "physical_package_id")
            if package is not None:
                by_package.setdefault(package, []).append((cpu, path))
        nodes = []
        for package in sorted(by_package):  # cadvisor walks a Go map: order unspecified
            cores = self.cores_info(by_package[package])
            node_caches = self.add_cache_info(cores)
            nodes.append(
                MachineInfoNode(id=package, cores=tuple(c.freeze() for c in cores), caches=tuple(node_caches))
            )
        # Quirk kept: the count is every cpu* directory, offline CPUs included.
        return nodes, len(cpu_dirs)

    def sockets_and_cores(self) -> tuple[int, int]:
        packages: set[int] = set()
        cores: set[tuple[int, int]] = set()
        for path in _glob(self.cpu_root, "cpu*[0-9]"):
            cpu = self.cpu_id(path)
            if not self.is_online(cpu):
                continue
            package = self.topology_value(cpu, "physical_package_id")
            if package is None:
                continue
            packages.add(package)
            core = self.topology_value(cpu, "core_id")
            if core is not None:
                cores.add((package, core))
        return len(packages), len(cores)


def read_sysfs(root: Path) -> MachineInfo:
    """Build cadvisor's ``MachineInfo`` from a sysfs tree.

    Raises ``InputError`` whose ``file`` names the offending file.
    """
    fs = _SysFs(root)
    nodes, num_cores = fs.nodes_info()
    sockets, physical_cores = fs.sockets_and_cores()
    return MachineInfo(
        num_cores=num_cores,
        num_sockets=sockets,
        topology=tuple(nodes),
        num_physical_cores=physical_cores,
        memory_capacity=fs.machine_memory(nodes),
        hugepages=machine_hugepages(nodes),
    )


def offline_cpus(root: Path) -> dict[int, int | None]:
    """The CPUs the tree lists (``cpuN`` directories) that the reader leaves
    out as offline, each with the NUMA node whose directory lists it (or
    ``None``). These are what the ``cpus`` table form marks ``online: false``."""
    fs = _SysFs(root)
    out: dict[int, int | None] = {}
    for path in _glob(fs.cpu_root, "cpu*[0-9]"):
        cpu = fs.cpu_id(path)
        if not fs.is_online(cpu):
            out[cpu] = None
    if out:
        for node_dir in _glob(fs.node_root, "node*[0-9]"):
            m = _NODE_NAME.fullmatch(node_dir.name)
            if m is None:
                continue
            for cpu in fs.node_cpus(node_dir):
                if cpu in out and out[cpu] is None:
                    out[cpu] = int(m.group(1))
    return dict(sorted(out.items()))


def load_sysfs(root: Path, *, name: str = "node") -> Machine:
    """The ``sysfs`` form: ``read_sysfs`` then the kubelet's ``Discover``."""
    info = read_sysfs(root)
    try:
        return build_machine(info, name=name)
    except InputError as err:
        raise InputError(f"{err.message} (in the topology read from sysfs)", file=str(root)) from None

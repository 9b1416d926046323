"""The cgroup tree and values the kubelet and containerd + runc write.

Pure: from a scenario's run (the pods running after a step, what the
managers gave each container) to an ordered list of cgroups, each with the
files and values written into it, for a cgroup driver (``systemd`` or
``cgroupfs``) and version (2 or 1). No I/O; ``apply.py`` writes.

What it reproduces (kubelet v1.37; the upstream files named are the ones
read):

- Layout (``pkg/kubelet/cm/cgroup_manager_linux.go`` ``CgroupName``,
  ``ToCgroupfs``/``ToSystemd``; ``helpers_linux.go``
  ``GetPodCgroupNameSuffix``; ``qos_container_manager_linux.go``): the node
  allocatable root ``kubepods`` under the cgroup root (``cgroupRoot`` or
  ``--cgroup-root``; sized from the capacity when ``enforceNodeAllocatable``
  lacks ``pods``); ``burstable`` and
  ``besteffort`` under it; Guaranteed pods directly under ``kubepods``; the
  pod cgroup ``pod<UID>``. containerd names container cgroups ``<pod>/<id>``
  (cgroupfs) or ``<pod slice>/cri-containerd-<id>.scope`` (systemd); the
  pause sandbox gets one the same way.
- kubepods (``node_container_manager_linux.go`` ``getCgroupConfig``): CPU
  shares and memory limit from capacity minus kube- and system-reserved
  (``enforceNodeAllocatable: [pods]``, the default); ``cpuset.cpus`` = every
  CPU only when the CPU manager has no allocatable CPUs: under the ``none``
  policy, or under ``static`` when every CPU is reserved (a one-CPU node with
  a CPU reservation); hugetlb ``1 << 62`` (a
  quirk: created with the allocatable pools, then the QoS container
  manager's ``UpdateCgroups`` updates it as the Guaranteed tier, unbounded);
  on cgroup v2 ``memory.min``/``memory.low`` reset to 0. ``pids.max`` (the
  host's ``pid_max`` minus reserved pids) is not planned.
- QoS tiers (``setCPUCgroupConfig``, ``setHugePagesUnbounded``): Burstable
  shares from the sum of its pods' CPU requests, BestEffort 2, hugetlb
  ``1 << 62`` for every page size.
- Pod cgroups (``helpers_linux.go`` ``ResourceConfigForPod``): pod-level
  requests and limits honoured, quota lifted (``-1``) when the pod has
  exclusive CPUs; hugetlb from requests, every other host size 0
  (``maybeSetHugetlb``).
- Containers (``kuberuntime_container_linux.go``
  ``generateLinuxContainerResources``, ``calculateLinuxResources``,
  ``getCPULimit``, ``getMemoryLimit``, ``GetHugepageLimitsFromResources``;
  ``cm/internal_container_lifecycle_linux.go`` ``PreCreateContainer``):
  shares from the request (else the limit, else the pod-level limit), quota
  from the limit or the pod-level limit, ``-1`` with exclusive CPUs;
  ``cpuset.cpus`` the CPU manager's assignment or the shared pool (after the
  reconcile loop) and nothing under ``none``; ``cpuset.mems`` the memory
  manager's NUMA nodes when it pinned memory; swap = limit (no swap).
- Conversions: kubelet-written cgroups use the kubelet's linear
  shares -> ``cpu.weight``; containers use runc's (>= 1.3.2) quadratic
  converter (``ConvertCPUSharesToCgroupV2Value``); ``cpu.max`` is
  ``<quota|max> <period>``.

Kubelet settings (``KubeletConfig.cgroups``): ``cpuCFSQuota`` (off: no
container quota or period, pod quota lifted), ``cpuCFSQuotaPeriod`` (the pod
cgroup's period; the containers' only under ``CustomCPUCFSQuotaPeriod``),
``podPidsLimit`` (the pod's ``pids.max``), ``singleProcessOOMKill`` (no
``memory.oom.group``), MemoryQoS on v2 (``memoryReservationPolicy:
TieredReservation``: ``memory.min`` for Guaranteed, ``memory.low`` for the
others, pod and container; ``memoryThrottlingFactor``: container and
pod-level ``memory.high``, rounded down to a 4 KiB page).

``cgroupsPerQOS: false`` (``container_manager_linux.go``
``NewPodContainerManager``: the no-op pod and QoS container managers;
``node_container_manager_linux.go`` ``enforceNodeAllocatableCgroups``): no
kubepods, tiers or pod cgroups; the cgroup root, when its name is not
empty (``//`` is not: it names ``/``), gets the capacity's values;
containers go where the runtime puts a container the kubelet names no
parent for: containerd's default ``k8s.io/<id>`` with the cgroupfs driver;
with the systemd driver runc refuses that path and no sandbox starts
(containerd's internal/cri/server ``getCgroupsPath`` is used only with a
parent; runc's ``specconv.CreateCgroupConfig``; checked with
``runtime-oracle``, docs/oracle.md).

``enforceNodeAllocatable`` with ``system-reserved`` / ``kube-reserved``
(or ``-compressible``; ``enforceNodeAllocatableCgroups``,
``enforceExistingCgroup``, ``getCgroupConfigInternal``): the kubelet
requires ``systemReservedCgroup`` / ``kubeReservedCgroup`` to exist (it
never creates it) and updates it at start, system before kube, the full
forms before the compressible ones (:func:`reserved_nodes`, entries of kind
``reserved``): CPU shares, and with the full form the memory limit and
``pids.max``; every host huge page size limited to 0 (no huge page
resource can be reserved: ``maybeSetHugetlb`` zeroes the sizes a
configuration omits -- the compressible form too; kubernetes/kubernetes#140544
asks for huge page reservations); every CPU as the cpuset
when the CPU manager has no allocatable CPUs; ``memory.min`` = the reserved
memory under MemoryQoS (v2). With the systemd driver only the name's last
element counts (``ParseSystemdToCgroupName``: ``/system.slice/x-y.slice``
is the slice ``x-y``, at ``x.slice/x-y.slice``).

Not modelled: the pause sandbox's own resources (its cgroup is planned,
empty; it inherits the pod's cpuset), MemoryQoS at the node and QoS tiers
(kubepods' ``memory.min`` and Burstable's ``memory.low`` under
TieredReservation: they are written ``0``, the reset the kubelet makes at
start with the default policy), terminating pods, and pods known only from
a checkpoint (they have no spec; they are listed in
``CgroupPlan.unplanned``).

The pod and container values are checked against the kubelet's own code
(``kubelet-oracle cgroups``, docs/oracle.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import Quantity
from podnuma.api.resources import (
    hugepage_resource_name,
    is_hugepage_resource,
    is_pod_level_resources_set,
    pod_limits,
    pod_requests,
)
from podnuma.cm.cpumanager.policy_none import POLICY_NONE as CPU_POLICY_NONE
from podnuma.cm.results import ContainerResult, StepResult
from podnuma.errors import InputError
from podnuma.golang.strconv import go_quote
from podnuma.machine.cpuset import CPUSet

__all__ = [
    "Driver",
    "CgroupFile",
    "CgroupNode",
    "CgroupPlan",
    "PlannedPod",
    "plan_from_pods",
    "running_pods",
    "milli_cpu_to_shares",
    "milli_cpu_to_quota",
    "kubelet_cpu_weight",
    "runc_cpu_weight",
    "hugepage_unit",
    "plan_document",
    "cgroupfs_path",
    "systemd_path",
    "check_cgroup_root",
    "check_systemd_root_names",
    "is_named_root",
    "parse_cgroup_root",
    "reserved_cgroup_name",
    "reserved_nodes",
    "ReservedEnforcement",
    "is_written_file",
    "is_container_id",
    "RUNTIME_DEFAULT_PARENT",
    "name_problem",
    "short_name",
    "NAME_MAX",
]

Driver = Literal["systemd", "cgroupfs"]
Kind = Literal["root", "node", "qos", "pod", "sandbox", "container", "reserved"]

MIN_SHARES = 2
MAX_SHARES = 262144
SHARES_PER_CPU = 1024
QUOTA_PERIOD = 100000  # µs
MIN_QUOTA_PERIOD = 1000  # µs
HUGETLB_UNBOUNDED = 1 << 62


# ----------------------------------------------------------------- formulas


def milli_cpu_to_shares(milli: int) -> int:
    """``MilliCPUToShares``: 2 for 0, else ⌊m·1024/1000⌋ clamped to [2, 262144]."""
    if milli == 0:
        return MIN_SHARES
    shares = (milli * SHARES_PER_CPU) // 1000
    return max(MIN_SHARES, min(MAX_SHARES, shares))


def milli_cpu_to_quota(milli: int, period: int = QUOTA_PERIOD) -> int:
    """``MilliCPUToQuota``: 0 (unset) for 0, else ⌊m·period/1000⌋, at least 1000 µs."""
    if milli == 0:
        return 0
    return max(MIN_QUOTA_PERIOD, (milli * period) // 1000)


def kubelet_cpu_weight(shares: int) -> int:
    """The kubelet's ``getCPUWeight`` (its own cgroups on v2): linear."""
    if shares >= MAX_SHARES:
        return 10000
    return 1 + ((shares - 2) * 9999) // 262142


def runc_cpu_weight(shares: int) -> int:
    """runc's ``ConvertCPUSharesToCgroupV2Value`` (>= 1.3.2): the quadratic
    fit through (2, 1), (1024, 100) and (262144, 10000)."""
    if shares == 0:
        return 0
    if shares <= 2:
        return 1
    if shares >= MAX_SHARES:
        return 10000
    log2 = math.log2(shares)
    exponent = (log2 * log2 + 125 * log2) / 612.0 - 7.0 / 34.0
    return math.ceil(10**exponent)


def hugepage_unit(page_size: int) -> str:
    """``HugePageUnitSizeFromByteSize``: ``2MB``, ``1GB``, ``64KB``."""
    units = ("B", "KB", "MB", "GB", "TB", "PB")
    idx = 0
    size = page_size
    while size >= 1024 and size % 1024 == 0 and idx < len(units) - 1:
        size //= 1024
        idx += 1
    return f"{size}{units[idx]}"


def cpu_max(quota: int, period: int) -> str:
    """runc's ``cpu.max``: ``max`` for a quota of 0 or less."""
    return f"{quota if quota > 0 else 'max'} {period}"


# ------------------------------------------------------------------ naming


NAME_MAX = 255  # bytes in one path component (linux/limits.h)


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one path component of a cgroup, or ``None``:
    empty, ``.``/``..``, a ``/``, NUL or newline, or longer than the
    kernel's ``NAME_MAX`` (``mkdir`` fails with ``ENAMETOOLONG``)."""
    if not name:
        return "is empty"
    if name in (".", ".."):
        return "is not a usable cgroup name"
    if "/" in name:
        return "contains '/'"
    if "\x00" in name or "\n" in name:
        return "contains a NUL or newline character"
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not valid UTF-8 text (it holds a lone surrogate)"
    if size > NAME_MAX:
        return f"is {size} bytes long; the kernel's limit for a name is {NAME_MAX} bytes"
    return None


def short_name(name: str) -> str:
    """``name`` cut to fit one line of an error message."""
    return name if len(name) <= 60 else f"{name[:40]}...{name[-12:]}"


def _check_component(
    component: str, what: str, path: str = "", *, root: bool = False, dots: bool = False
) -> str:
    """``NewCgroupName``'s rule (no ``/``, no ``_``), plus what a path must
    never be, so no name can leave the root. ``root``: a component of the
    ``--cgroup-root``, which the kubelet parses without ``NewCgroupName``
    (``ParseCgroupfsToCgroupName``): a ``_`` is taken there. ``dots``: a
    ``.`` or ``..`` is taken too (a component of a systemd root: it only
    ever names part of a slice, ``a-.-b.slice``)."""
    bad = None
    if not component:
        bad = "is empty"
    elif "/" in component or ("_" in component and not root):
        bad = "contains '/' or '_' (the kubelet refuses such cgroup names)"
    elif (component in (".", "..") and not dots) or "\x00" in component or "\n" in component:
        bad = "is not a usable cgroup name"
    elif component not in (".", ".."):
        bad = name_problem(component)
    if bad is not None:
        raise InputError(f"{what} {short_name(component)!r} {bad}", path=path)
    return component


def check_cgroup_root(
    components: Sequence[str], where: str = "cgroupRoot", driver: Driver = "cgroupfs"
) -> tuple[str, ...]:
    """The kubelet's ``--cgroup-root`` components, checked as
    ``NewCgroupName`` does (and for anything that could leave the root):
    :class:`InputError` at ``where``, the option or field the value came
    from (``--cgroup-root`` on the command line). Under ``systemd`` a
    ``.`` or ``..`` component is taken: it is part of a slice name
    (``ToSystemd``), never a directory of its own; under ``cgroupfs`` the
    components are the cleaned path's (:func:`parse_cgroup_root`), which
    has none."""
    dots = driver == "systemd"
    return tuple(_check_component(c, "cgroup root component", where, root=True, dots=dots) for c in components)


def check_systemd_root_names(
    components: Sequence[str], where: str, value: str | None = None, *, per_qos: bool = True
) -> None:
    """The slice directories ``ToSystemd`` expands a systemd root to (with
    ``kubepods`` when ``per_qos``; ``ExpandSlice``: ``a.slice``,
    ``a-b.slice``, ...), each at most ``NAME_MAX`` bytes: :class:`InputError`
    at ``where`` in the words the pods' check uses (the kernel refuses the
    ``mkdir`` with ``ENAMETOOLONG``)."""
    escaped = [c.replace("-", "_") for c in [*components, *(["kubepods"] if per_qos else [])]]
    for i in range(len(escaped)):
        name = "-".join(escaped[: i + 1]) + ".slice"
        problem = name_problem(name)
        if problem is not None:
            shown = value if value is not None else "/" + "/".join(components)
            raise InputError(
                f"cgroup root {short_name(shown)!r}: cgroup name {short_name(name)!r} {problem}", path=where
            )


def is_named_root(value: str) -> bool:
    """Whether the kubelet's cgroup root ``value`` is a non-empty
    ``CgroupName`` (``ParseCgroupfsToCgroupName``: only ``""`` and ``/``
    give none): without cgroupsPerQOS, ``enforceNodeAllocatableCgroups``
    updates such a root (node_container_manager_linux.go: ``if
    len(cm.cgroupRoot) > 0``) even when it names ``/`` (``//``; cgroupfs
    ``/.``)."""
    return value.removeprefix("/") != ""


def parse_cgroup_root(
    value: str, driver: Driver, where: str = "--cgroup-root", *, per_qos: bool = True
) -> tuple[str, ...]:
    """The kubelet's ``--cgroup-root`` string as the components of the plan.

    The kubelet reads it with ``ParseCgroupfsToCgroupName``
    (pkg/kubelet/cm/cgroup_manager_linux.go): one leading ``/`` trimmed,
    the rest split at every ``/``, so ``a//b``, ``a/``, ``/a/`` and ``//a``
    keep an empty component (only ``/`` and ``""`` give none). At start it
    appends ``kubepods`` (``NodeAllocatableRoot`` in helpers_linux.go, from
    cmd/kubelet/app/server.go; not with ``cgroupsPerQOS: false``, ``per_qos``
    here) and converts the name for its driver:

    - cgroupfs: ``ToCgroupfs`` is ``"/" + path.Join(components...)``, and
      ``path.Join`` skips empty elements and cleans the result -- ``a//b``
      and ``a/./b`` are the cgroup ``/a/b``, ``custom/..`` is ``/``: the
      cleaned path's components are returned (``()`` for ``/``). A path
      that cleans to one above the root (``..``, ``../x``: the kubelet's
      ``/../kubepods``) is refused: podnuma writes only under its root;
    - systemd: ``ToSystemd`` joins the (``-`` -> ``_`` escaped) components
      with ``-`` into one slice name for opencontainers/cgroups'
      ``ExpandSlice``, which takes ``-.slice`` as ``/`` (``//`` without
      cgroupsPerQOS: ``()`` here) and refuses any other name with an empty
      component (``a--b-kubepods.slice``): ``ToSystemd`` then panics, the
      kubelet never starts -- :class:`InputError` at ``where`` saying so.
      ``.`` and ``..`` stay components: they are only ever part of a slice
      name (``a-.-b.slice``, ``...slice``), every directory ending in
      ``.slice``. A slice name over ``NAME_MAX`` bytes is refused at
      ``where`` (:func:`check_systemd_root_names`).

    The components left are checked by :func:`check_cgroup_root`."""
    components = value.removeprefix("/").split("/")
    if components == [""]:
        return ()
    if driver == "systemd":
        escaped = [c.replace("-", "_") for c in [*components, *(["kubepods"] if per_qos else [])]]
        if "-".join(escaped) == "-":  # ExpandSlice("-.slice") is "/"
            return ()
        if "" in components:
            raise InputError(
                f"{short_name(value)!r} has an empty component (two '/' in a row, or one at the end); the "
                f"kubelet with the systemd driver would panic at start (ToSystemd: ExpandSlice: invalid slice "
                f"name: {short_name('-'.join(escaped) + '.slice')})",
                path=where,
            )
        checked = check_cgroup_root(components, where, "systemd")
        check_systemd_root_names(checked, where, value, per_qos=per_qos)
        return checked
    cleaned = posixpath.normpath("/".join(c for c in components if c)) if any(components) else "."
    if cleaned == ".":
        return ()
    parts = cleaned.split("/")
    if parts[0] == "..":
        joined = "/" + posixpath.normpath("/".join([*parts, *(["kubepods"] if per_qos else [])]))
        raise InputError(
            f"{short_name(value)!r} names a cgroup above the cgroup root (the kubelet's cgroupfs name "
            f"'/' + path.Join(...) is {short_name(joined)!r}); podnuma writes only under its root",
            path=where,
        )
    return check_cgroup_root(parts, where)


def _go_base(value: str) -> str:
    """Go's ``path.Base``: the last element, trailing slashes dropped
    (``.`` for ``""``, ``/`` for slashes only)."""
    if value == "":
        return "."
    value = value.rstrip("/")
    if value == "":
        return "/"
    return value.rpartition("/")[2]


def _reserved_name(value: str, driver: Driver) -> tuple[str, ...]:
    """The cgroup manager's ``CgroupName`` of a reserved cgroup's text."""
    if driver == "systemd":
        base = _go_base(value).removesuffix(".slice")
        return tuple(part.replace("_", "-") for part in base.split("-"))
    parts = value.removeprefix("/").split("/")
    return () if parts == [""] else tuple(parts)


def reserved_cgroup_name(value: str, driver: Driver, where: str) -> tuple[tuple[str, ...], str]:
    """A reserved cgroup's name (``systemReservedCgroup``,
    ``kubeReservedCgroup``) as the kubelet's cgroup manager reads it
    (``CgroupName``), and its path in the plan's form (no leading ``/``;
    ``""``: the root).

    - systemd (``ParseSystemdToCgroupName``): the last path element only,
      ``.slice`` cut, split at ``-``, ``_`` read as ``-``; its path is
      ``ToSystemd``'s (``ExpandSlice``: a name with an empty part, or ``/``
      itself, makes it panic: the kubelet never starts -- :class:`InputError`
      at ``where`` saying so; ``-.slice`` and ``.slice`` name the root);
    - cgroupfs (``ParseCgroupfsToCgroupName``, ``ToCgroupfs``): the path's
      elements, cleaned as ``path.Join`` cleans them; a path above the
      hierarchy's root is refused, as for the cgroup root (podnuma writes
      only under its root).

    Each directory name is checked as any cgroup name of a plan is."""
    name = _reserved_name(value, driver)
    if driver == "systemd":
        if len(name) == 1 and name[0] == "":
            return name, ""
        slice_name = "-".join(part.replace("-", "_") for part in name) + ".slice"
        if slice_name == "-.slice":
            return name, ""
        if "/" in slice_name or "" in name:
            raise InputError(
                f"{short_name(value)!r}: the kubelet with the systemd driver would panic at start (ToSystemd: "
                f"ExpandSlice: invalid slice name: {short_name(slice_name)})",
                path=where,
            )
        path = systemd_path(name)
    else:
        joined = "/".join(p for p in name if p)
        cleaned = posixpath.normpath(joined) if joined else "."
        if cleaned == ".." or cleaned.startswith("../"):
            raise InputError(
                f"{short_name(value)!r} names a cgroup above the cgroup root (the kubelet's cgroupfs name is "
                f"{short_name('/' + cleaned)!r}); podnuma writes only under its root",
                path=where,
            )
        path = "" if cleaned == "." else cleaned
    for component in path.split("/") if path else ():
        problem = name_problem(component)
        if problem is not None:
            raise InputError(f"{short_name(value)!r}: cgroup name {short_name(component)!r} {problem}", path=where)
    return name, path


@dataclass(frozen=True)
class ReservedEnforcement:
    """One reserved enforcement of ``enforceNodeAllocatable``: its key
    (``system-reserved``...), the cgroup it names, the reserved resources
    (``systemReserved``/``kubeReserved`` as the kubelet parsed them),
    whether only the compressible ones are enforced, the configuration
    field naming the cgroup (for errors) and the words of the kubelet's
    failure (``System Reserved``...)."""

    key: str
    cgroup: str
    reserved: Mapping[str, Quantity]
    compressible: bool
    field: str
    words: str


def _go_quote_name(name: Sequence[str]) -> str:
    """Go's ``%q`` of a ``CgroupName`` (a ``[]string``)."""
    return "[" + " ".join(go_quote(part) for part in name) + "]"


def reserved_nodes(
    enforcements: Sequence[ReservedEnforcement], facts: NodeFacts, *, driver: Driver, version: int
) -> tuple[CgroupNode, ...]:
    """The reserved cgroups the kubelet updates at start, in its order
    (``enforcements``: as ``enforceNodeAllocatableCgroups`` takes them;
    see the module docstring for the values). Two enforcements naming one
    cgroup give one node: the later update's files over the earlier's.
    An empty reserved list fails the kubelet's start
    (``getCgroupConfig`` gives no configuration): :class:`InputError` at
    the enforcement's field, in the kubelet's words."""
    order: list[str] = []
    merged: dict[str, dict[str, CgroupFile]] = {}
    cpus_of: dict[str, CPUSet | None] = {}
    cpus = _node_cpus(facts)
    for e in enforcements:
        if not e.reserved:  # (checked before the name is expanded, as the kubelet does)
            raise InputError(
                f"the kubelet would not start: Failed to enforce {e.words} Cgroup Limits on {go_quote(e.cgroup)}: "
                f"{_go_quote_name(_reserved_name(e.cgroup, driver))} cgroup is not configured properly (nothing "
                f"reserved in {'systemReserved' if e.key.startswith('system') else 'kubeReserved'})",
                path=e.field,
            )
        _, path = reserved_cgroup_name(e.cgroup, driver, e.field)
        files: list[CgroupFile] = []
        if "cpu" in e.reserved:
            files += _cpu_files(version, milli_cpu_to_shares(_milli(e.reserved, "cpu")), None, None, runtime=False)
        if not e.compressible:
            memory = e.reserved.get("memory")
            if memory is not None:
                files += _memory_files(version, memory.value(), swap=False)
            pids = e.reserved.get("pid")
            if pids is not None:
                # the runc library: 0 is written 1 (as systemd's TasksMax
                # takes no 0), a negative limit "max"
                limit = pids.value()
                files.append(CgroupFile("pids.max", str(limit) if limit > 0 else "1" if limit == 0 else "max"))
            if memory is not None and facts.memory_qos and version == 2:
                files.append(CgroupFile("memory.min", str(memory.value())))
        files += _hugetlb_files(version, {}, facts.hugepage_sizes)
        written = [*_cpuset_files(cpus, None), *files]
        if path == "" and written:
            # the hierarchy's root: with cgroupfs the kernel offers none of
            # these files there (v2) or refuses them (v1); with systemd the
            # update goes to the unit "-.scope" (libctCgroupConfig: the name
            # split into parent "-.slice" and an empty name), which does not
            # exist: the update fails and the kubelet does not start
            raise InputError(
                f"the kubelet would not start: Failed to enforce {e.words} Cgroup Limits on "
                f"{go_quote(e.cgroup)}: the cgroup hierarchy's root cannot be updated "
                f"({', '.join(f.name for f in written)}); name a cgroup below it",
                path=e.field,
            )
        if path not in merged:
            order.append(path)
            merged[path] = {}
        cpus_of[path] = cpus
        for f in written:
            merged[path][f.name] = f
    return tuple(
        CgroupNode(path=p, kind="reserved", writer="kubelet", files=tuple(merged[p].values()), cpus=cpus_of[p])
        for p in order
    )


def cgroupfs_path(components: Sequence[str]) -> str:
    """``ToCgroupfs`` without the leading ``/``."""
    return "/".join(components)


def systemd_path(components: Sequence[str]) -> str:
    """``ToSystemd`` expanded: each component ``-`` -> ``_``, nested slices."""
    parts: list[str] = []
    prefix = ""
    for comp in components:
        escaped = comp.replace("-", "_")
        prefix = f"{prefix}-{escaped}" if prefix else escaped
        parts.append(f"{prefix}.slice")
    return "/".join(parts)


_CONTAINER_ID = re.compile(r"[0-9a-f]{64}")


def is_container_id(name: str) -> bool:
    """Whether ``name`` has the form of a container id the plans use
    (64 lower-case hex digits)."""
    return _CONTAINER_ID.fullmatch(name) is not None


def _container_id(pod_uid: str, name: str) -> str:
    """A stand-in for the runtime's container id (64 hex digits, stable)."""
    return hashlib.sha256(f"{pod_uid}/{name}".encode()).hexdigest()


# -------------------------------------------------------------------- model


@dataclass(frozen=True, slots=True)
class CgroupFile:
    """One write: ``name`` (``cpu.max``, ``cpuset.cpus``...) gets ``value``.

    ``optional``: written only where the kernel offers the file (swap
    accounting, hugetlb reservations), as runc does.
    """

    name: str
    value: str
    optional: bool = False

    @property
    def controller(self) -> str:
        return self.name.split(".", 1)[0]


@dataclass(frozen=True)
class CgroupNode:
    """One cgroup: its path relative to the cgroup mount (no leading ``/``),
    who creates it, and the files written into it in order.

    ``cpus``/``mems`` are the planned cpuset (``None``: not written; on v1
    runc then copies the parent's, as the kernel requires both before a
    task can join).
    """

    path: str
    kind: Kind
    writer: Literal["kubelet", "runtime"]
    files: tuple[CgroupFile, ...] = ()
    pod: str | None = None
    pod_uid: str | None = None
    container: str | None = None
    container_id: str | None = None
    cpus: CPUSet | None = None
    mems: tuple[int, ...] | None = None


@dataclass(frozen=True)
class CgroupPlan:
    driver: Driver
    version: int
    step: int | None
    nodes: tuple[CgroupNode, ...]
    unplanned: tuple[str, ...] = ()  # pod UIDs known only from a checkpoint
    #: without cgroupsPerQOS: container ids (under the runtime's default
    #: parent) of pods the plan does not hold but the kubelet has (running
    #: since before the start): an apply leaves them
    guarded: tuple[str, ...] = ()
    #: what the kubelet writes that the plan does not hold (said in the
    #: plan's document: ``notes``)
    notes: tuple[str, ...] = ()

    def node(self, path: str) -> CgroupNode:
        for n in self.nodes:
            if n.path == path:
                return n
        raise KeyError(path)


@dataclass(frozen=True)
class PlannedPod:
    """A running pod: its spec, QoS class and what each live container got.

    ``admitted``: the containers as the pod was admitted, when some have
    gone since (``None``: ``containers``). The kubelet decides the pod
    cgroup's CPU quota once, when it creates the cgroup at the pod's start
    (``podContainerManagerImpl.EnsureExists``), so a container removed
    later does not change it.
    """

    pod: Pod
    qos_class: str
    containers: tuple[ContainerResult, ...]
    admitted: tuple[ContainerResult, ...] | None = None
    #: the shared pool when the containers were created (what
    #: ``PreCreateContainer`` wrote into a shared container's cpuset; ``None``
    #: when it was empty, so nothing was written)
    created_shared: CPUSet | None = None


@dataclass(frozen=True)
class NodeFacts:
    """What the node-level cgroups need."""

    all_cpus: CPUSet
    cpu_manager_policy: str
    allocatable: Mapping[str, Quantity]  # capacity - kube - system reserved
    hugepage_sizes: tuple[int, ...]  # bytes
    pod_level_resources: bool
    memory_qos: bool
    pod_level_resource_managers: bool = False
    default_cpuset: CPUSet = field(default_factory=CPUSet)
    #: the static policy's reserved CPUs (empty under ``none``)
    reserved_cpus: CPUSet = field(default_factory=CPUSet)
    #: ``cpuCFSQuota``: the kubelet enforces CPU limits with a CFS quota
    cpu_cfs_quota: bool = True
    #: ``cpuCFSQuotaPeriod`` in µs: the pod cgroup's period always; the
    #: containers' only under the ``CustomCPUCFSQuotaPeriod`` gate
    #: (``container_period``), else 100 ms
    pod_period: int = QUOTA_PERIOD
    container_period: int = QUOTA_PERIOD
    #: ``podPidsLimit`` (> 0: the pod cgroup's ``pids.max``)
    pod_pids_limit: int = -1
    #: ``singleProcessOOMKill`` as kubelet.go resolves it on cgroup v2 (v1
    #: never asks for memory.oom.group)
    single_process_oom_kill: bool = False
    #: MemoryQoS settings (cgroup v2 with the gate): ``memoryThrottlingFactor``
    #: and ``memoryReservationPolicy``
    memory_throttling_factor: float | None = None
    memory_reservation_policy: str = "None"
    #: the node's capacity (cadvisor's), what the node allocatable root is
    #: sized from without cgroupsPerQOS or without ``pods`` in
    #: enforceNodeAllocatable (``None``: ``allocatable``)
    capacity: Mapping[str, Quantity] | None = None


def running_pods(
    steps: Sequence[StepResult], pods: Mapping[int, Pod], upto: int
) -> dict[str, PlannedPod]:
    """Pods running after step ``upto`` (0-based, inclusive), by UID, from
    the steps' results and the pods their ``addPod`` steps carried."""
    running: dict[str, PlannedPod] = {}
    for step in steps[: upto + 1]:
        if step.op == "addPod":
            pod = pods.get(step.index)
            if step.admitted and pod is not None:
                running[step.pod_uid] = PlannedPod(
                    pod, step.qos_class or "BestEffort", step.containers,
                    created_shared=step.default_cpuset or None,
                )  # fmt: skip
        elif step.op == "removePod":
            running.pop(step.pod_uid, None)
        elif step.op == "removeContainer":
            cur = running.get(step.pod_uid)
            if cur is not None:
                kept = tuple(c for c in cur.containers if c.name != step.container)
                admitted = cur.admitted if cur.admitted is not None else cur.containers
                running[step.pod_uid] = PlannedPod(cur.pod, cur.qos_class, kept, admitted, cur.created_shared)
    return running


# ------------------------------------------------------------------ values


def _milli(resources: Mapping[str, Quantity], name: str) -> int:
    q = resources.get(name)
    return 0 if q is None else q.milli_value()


def _value(resources: Mapping[str, Quantity], name: str) -> int:
    q = resources.get(name)
    return 0 if q is None else q.value()


def _page_size_of(resource: str) -> int:
    from podnuma.api.quantity import parse_quantity

    return parse_quantity(resource[len("hugepages-") :]).value()


def _cpu_files(
    version: int, shares: int | None, quota: int | None, period: int | None, *, runtime: bool
) -> list[CgroupFile]:
    out: list[CgroupFile] = []
    if version == 2:
        if shares is not None:
            weight = runc_cpu_weight(shares) if runtime else kubelet_cpu_weight(shares)
            out.append(CgroupFile("cpu.weight", str(weight)))
        if quota is not None and (quota != 0 or period):
            out.append(CgroupFile("cpu.max", cpu_max(quota, period or QUOTA_PERIOD)))
    else:
        if shares is not None:
            out.append(CgroupFile("cpu.shares", str(shares)))
        if period:
            out.append(CgroupFile("cpu.cfs_period_us", str(period)))
        if quota:
            out.append(CgroupFile("cpu.cfs_quota_us", str(quota)))
    return out


def _memory_files(version: int, limit: int | None, *, swap: bool) -> list[CgroupFile]:
    if not limit:
        return []
    if version == 2:
        out = [CgroupFile("memory.max", str(limit))]
        if swap:  # swap limit = memory limit: runc writes swap.max = swap - limit
            out.append(CgroupFile("memory.swap.max", "0", optional=True))
        return out
    out = [CgroupFile("memory.limit_in_bytes", str(limit))]
    if swap:
        out.append(CgroupFile("memory.memsw.limit_in_bytes", str(limit), optional=True))
    return out


def _hugetlb_files(version: int, limits: Mapping[int, int], sizes: Sequence[int]) -> list[CgroupFile]:
    out: list[CgroupFile] = []
    for size in sizes:
        value = str(limits.get(size, 0))
        unit = hugepage_unit(size)
        if version == 2:
            out.append(CgroupFile(f"hugetlb.{unit}.max", value))
            out.append(CgroupFile(f"hugetlb.{unit}.rsvd.max", value, optional=True))
        else:
            out.append(CgroupFile(f"hugetlb.{unit}.limit_in_bytes", value))
            out.append(CgroupFile(f"hugetlb.{unit}.rsvd.limit_in_bytes", value, optional=True))
    return out


def _cpuset_files(cpus: CPUSet | None, mems: Sequence[int] | None) -> list[CgroupFile]:
    # cpuset.mems first: a task may only join once both are set (v1)
    out: list[CgroupFile] = []
    if mems is not None:
        out.append(CgroupFile("cpuset.mems", ",".join(str(m) for m in mems)))
    if cpus is not None:
        out.append(CgroupFile("cpuset.cpus", str(cpus)))
    return out


# ---------------------------------------------------- the files a plan writes

#: The interface files a plan writes into a cgroup, by cgroup version: those
#: of the helpers above and of ``_pod_node``/``_container_node`` (MemoryQoS,
#: ``pids.max``), and ``cgroup.procs`` (``apply.attach``). The huge page
#: files, named by page size, are :data:`_HUGETLB_FILE`'s.
#: ``cgroup.subtree_control`` is not one: it is written on a cgroup file
#: system only, never created.
_WRITTEN_FILES: dict[int, frozenset[str]] = {
    2: frozenset({
        "cpuset.cpus", "cpuset.mems", "cpu.weight", "cpu.max", "memory.max", "memory.swap.max",
        "memory.min", "memory.low", "memory.high", "memory.oom.group", "pids.max", "cgroup.procs",
    }),
    1: frozenset({
        "cpuset.cpus", "cpuset.mems", "cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us",
        "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "pids.max", "cgroup.procs",
    }),
}  # fmt: skip
#: ``_hugetlb_files``' names for any page size (``hugepage_unit``'s units)
_HUGETLB_FILE: dict[int, re.Pattern[str]] = {
    2: re.compile(r"hugetlb\.[1-9][0-9]*(?:B|KB|MB|GB|TB|PB)\.(?:rsvd\.)?max"),
    1: re.compile(r"hugetlb\.[1-9][0-9]*(?:B|KB|MB|GB|TB|PB)\.(?:rsvd\.)?limit_in_bytes"),
}


def is_written_file(name: str, version: int) -> bool:
    """Whether a plan for cgroup ``version`` may write a file called
    ``name``, whatever the driver (it names the cgroups, not their files)
    and the machine's huge page sizes. On a plain directory these are the
    only files podnuma creates, so the only ones it may delete."""
    pattern = _HUGETLB_FILE.get(version)
    return name in _WRITTEN_FILES.get(version, frozenset()) or (
        pattern is not None and pattern.fullmatch(name) is not None
    )


def _pod_has_exclusive_cpus(planned: PlannedPod, facts: NodeFacts) -> bool:
    """``PodHasExclusiveCPUs`` (container_manager_linux.go): for a pod with
    pod-level resources under ``PodLevelResourceManagers``, every container
    is container-isolated; otherwise some container holds exclusive CPUs.
    Asked when the pod cgroup is created: of the containers as admitted."""
    admitted = planned.admitted if planned.admitted is not None else planned.containers
    levels = [c.isolation for c in admitted]
    if facts.pod_level_resource_managers and is_pod_level_resources_set(planned.pod):
        return all(level == "container" for level in levels)
    return "container" in levels


def _pod_node(
    path: str, planned: PlannedPod, facts: NodeFacts, version: int
) -> CgroupNode:
    pod = planned.pod
    plr = facts.pod_level_resources
    reqs = pod_requests(pod, pod_level_resources=plr)
    limits = pod_limits(pod, pod_level_resources=plr)
    cpu_declared = all(
        not (c.limits.get("cpu") or Quantity.zero()).is_zero() for c in pod.all_containers()
    )
    mem_declared = all(
        not (c.limits.get("memory") or Quantity.zero()).is_zero() for c in pod.all_containers()
    )
    if plr and is_pod_level_resources_set(pod) and pod.resources is not None:
        if not (pod.resources.limits.get("cpu") or Quantity.zero()).is_zero():
            cpu_declared = True
        if not (pod.resources.limits.get("memory") or Quantity.zero()).is_zero():
            mem_declared = True
    shares = milli_cpu_to_shares(_milli(reqs, "cpu"))
    period = facts.pod_period
    quota = milli_cpu_to_quota(_milli(limits, "cpu"), period)
    if not facts.cpu_cfs_quota or _pod_has_exclusive_cpus(planned, facts):
        quota = -1  # enforceCPULimits is false: cpuCFSQuota off, or a pod with exclusive CPUs
    memory = _value(limits, "memory")
    hugepages: dict[int, int] = {}
    for name, qty in reqs.items():
        if is_hugepage_resource(name):
            size = _page_size_of(name)
            hugepages[size] = hugepages.get(size, 0) + qty.value()
    files: list[CgroupFile] = []
    if version == 2 and facts.memory_qos:
        files += _pod_memory_qos(planned, facts, _value(reqs, "memory"))
    if facts.pod_pids_limit > 0:
        files.append(CgroupFile("pids.max", str(facts.pod_pids_limit)))
    if planned.qos_class == "Guaranteed":
        files += _cpu_files(version, shares, quota, period, runtime=False)
        files += _memory_files(version, memory, swap=False)
    elif planned.qos_class == "Burstable":
        files += _cpu_files(
            version, shares, quota if cpu_declared else None,
            period if cpu_declared else None, runtime=False,
        )  # fmt: skip
        if mem_declared:
            files += _memory_files(version, memory, swap=False)
    else:
        files += _cpu_files(version, MIN_SHARES, None, None, runtime=False)
    files += _hugetlb_files(version, hugepages, facts.hugepage_sizes)
    return CgroupNode(
        path=path, kind="pod", writer="kubelet", files=tuple(files), pod=pod.ref, pod_uid=pod.uid
    )


#: The kubelet's page size (``os.Getpagesize()``; 4 KiB on the x86-64 and
#: arm64 kernels podnuma models) rounds memory.high down.
PAGE_SIZE = 4096


def _memory_high(request: int, limit: int, factor: float) -> int:
    """KEP-2570's memory.high: request + factor x (limit - request), rounded
    down to a page, computed in float64 as the kubelet does."""
    return int(math.floor(float(request) + (float(limit) - float(request)) * factor) / PAGE_SIZE) * PAGE_SIZE


def _pod_memory_qos(planned: PlannedPod, facts: NodeFacts, memory_request: int) -> list[CgroupFile]:
    """MemoryQoS on a pod cgroup (``ResourceConfigForPod`` under
    TieredReservation, then ``ApplyPodLevelMemoryHigh``)."""
    out: list[CgroupFile] = []
    if facts.memory_reservation_policy == "TieredReservation" and memory_request > 0:
        name = "memory.min" if planned.qos_class == "Guaranteed" else "memory.low"
        out.append(CgroupFile(name, str(memory_request)))
    pod = planned.pod
    factor = facts.memory_throttling_factor
    if factor is None or not facts.pod_level_resources or not is_pod_level_resources_set(pod):
        return out
    assert pod.resources is not None
    declared = all(not (c.limits.get("memory") or Quantity.zero()).is_zero() for c in pod.all_containers())
    if not (pod.resources.limits.get("memory") or Quantity.zero()).is_zero():
        declared = True
    if not declared:
        return out
    request = _value(pod_requests(pod, pod_level_resources=True), "memory")
    limit = _value(pod_limits(pod, pod_level_resources=True), "memory")
    if (request == limit and request != 0) or limit == 0:
        return out
    high = _memory_high(request, limit, factor)
    if high > 0 and high > request:
        out.append(CgroupFile("memory.high", str(high)))
    return out


def _container_memory_qos(planned: PlannedPod, spec: Container, facts: NodeFacts) -> list[CgroupFile]:
    """MemoryQoS on a container (``generateLinuxContainerResources``):
    memory.min (Guaranteed) or memory.low from the request under
    TieredReservation, else both 0; memory.high from the throttling factor
    and the limit (or the node's allocatable memory) when the request is
    below the limit, left to the pod cgroup when only the pod sets one."""
    pod = planned.pod
    request = _value(spec.requests, "memory")
    limit = _value(spec.limits, "memory")
    out: list[CgroupFile] = []
    if request != 0 and facts.memory_reservation_policy == "TieredReservation":
        name = "memory.min" if planned.qos_class == "Guaranteed" else "memory.low"
        out.append(CgroupFile(name, str(request)))
    else:
        out += [CgroupFile("memory.min", "0"), CgroupFile("memory.low", "0")]
    factor = facts.memory_throttling_factor
    skip = (
        limit == 0
        and facts.pod_level_resources
        and is_pod_level_resources_set(pod)
        and pod.resources is not None
        and not (pod.resources.limits.get("memory") or Quantity.zero()).is_zero()
    )
    if factor is not None and not skip and (request != limit or request == 0):
        high = 0
        if limit != 0:
            high = _memory_high(request, limit, factor)
        else:
            allocatable = _value(facts.allocatable, "memory")
            if allocatable > 0:
                high = _memory_high(request, allocatable, factor)
        if high != 0 and high > request:
            out.append(CgroupFile("memory.high", str(high)))
    return out


def _container_cpu_limit(pod: Pod, c: Container, plr: bool) -> int:
    """``getCPULimit``: the container's limit, or the pod-level one when the
    container has none and pod-level resources are set."""
    own = _milli(c.limits, "cpu")
    if own == 0 and plr and is_pod_level_resources_set(pod) and pod.resources is not None:
        return _milli(pod.resources.limits, "cpu")
    return own


def _container_memory_limit(pod: Pod, c: Container, plr: bool) -> int:
    own = _value(c.limits, "memory")
    if own == 0 and plr and is_pod_level_resources_set(pod) and pod.resources is not None:
        return _value(pod.resources.limits, "memory")
    return own


def _container_node(
    path: str,
    cid: str,
    planned: PlannedPod,
    result: ContainerResult,
    facts: NodeFacts,
    version: int,
) -> CgroupNode:
    pod = planned.pod
    plr = facts.pod_level_resources
    spec = pod.container(result.name)
    cpu_limit = _container_cpu_limit(pod, spec, plr)
    request = spec.requests.get("cpu")
    shares = milli_cpu_to_shares(request.milli_value() if request is not None else cpu_limit)
    # calculateLinuxResources: period and quota only with cpuCFSQuota
    period: int | None = facts.container_period if facts.cpu_cfs_quota else None
    quota: int | None = None
    if period is not None:
        quota = -1 if result.cpu_quota_disabled else milli_cpu_to_quota(cpu_limit, period)
    memory = _container_memory_limit(pod, spec, plr)
    hugepages: dict[int, int] = {}
    if plr and is_pod_level_resources_set(pod) and pod.resources is not None:
        for name, qty in pod.resources.limits.items():
            if is_hugepage_resource(name):
                hugepages[_page_size_of(name)] = qty.value()
    for name, qty in spec.limits.items():
        if is_hugepage_resource(name):
            hugepages[_page_size_of(name)] = qty.value()

    # PreCreateContainer: the CPU manager's set (none under policy "none"),
    # the memory manager's NUMA nodes (none when it pinned nothing).
    cpus: CPUSet | None = None
    if facts.cpu_manager_policy != "none":
        if result.isolation == "host":
            # the reconcile loop moves a shared container to the current
            # shared pool, and leaves it where it is when the pool is empty
            cpus = facts.default_cpuset if facts.default_cpuset else planned.created_shared
        else:
            cpus = result.cpus if result.cpus else None
    mems: tuple[int, ...] | None = None
    if result.memory:
        mems = tuple(sorted({n for b in result.memory for n in b.numa_nodes}))

    files = _cpuset_files(cpus, mems)
    files += _cpu_files(version, shares, quota, period, runtime=True)
    files += _memory_files(version, memory, swap=True)
    if version == 2 and not memory:
        # the kubelet asks for no swap on every container where the kernel
        # offers swap control (kuberuntime ConfigureNoSwap: memory.swap.max
        # 0 in the unified map), with or without a memory limit
        files.append(CgroupFile("memory.swap.max", "0", optional=True))
    files += _hugetlb_files(version, hugepages, facts.hugepage_sizes)
    if version == 2:
        if facts.memory_qos:
            files += _container_memory_qos(planned, spec, facts)
        else:
            files.append(CgroupFile("memory.high", "max"))
        if not facts.single_process_oom_kill:  # defaults to false on v2
            files.append(CgroupFile("memory.oom.group", "1"))
    return CgroupNode(
        path=path, kind="container", writer="runtime", files=tuple(files), pod=pod.ref,
        pod_uid=pod.uid, container=result.name, container_id=cid, cpus=cpus, mems=mems,
    )  # fmt: skip


def plan_from_pods(
    pods: Mapping[str, PlannedPod],
    facts: NodeFacts,
    *,
    driver: Driver,
    version: int,
    cgroup_root: Sequence[str] = (),
    step: int | None = None,
    unplanned: Sequence[str] = (),
    uid_paths: Mapping[str, str] | None = None,
    other_active: Sequence[tuple[Pod, str]] = (),
    cgroups_per_qos: bool = True,
    enforce_pods: bool = True,
    update_root: bool | None = None,
) -> CgroupPlan:
    """The whole tree, parents before children. ``uid_paths``: the field
    path of each pod's UID, for errors (default ``metadata.uid``).
    ``other_active``: pods (with their QoS class) the kubelet has active
    whose cgroups are not planned (running since before the start); their
    requests count in the QoS tiers' values. ``cgroups_per_qos``: the
    kubelet's ``cgroupsPerQOS`` (off: no kubepods, QoS or pod cgroups, see
    :func:`_plan_without_qos`); ``enforce_pods``: ``pods`` is in
    ``enforceNodeAllocatable`` (off: kubepods is sized from the capacity);
    ``update_root``: without cgroupsPerQOS, the kubelet's cgroup root is a
    non-empty name it updates (:func:`is_named_root`; ``None``: when
    ``cgroup_root`` has components -- ``//`` names ``/`` and is updated)."""
    if driver not in ("systemd", "cgroupfs"):
        raise InputError(f"unknown cgroup driver {driver!r} (systemd or cgroupfs)", path="driver")
    if version not in (1, 2):
        raise InputError(f"unknown cgroup version {version!r} (1 or 2)", path="cgroupVersion")
    base = list(check_cgroup_root(cgroup_root, driver=driver))
    if driver == "systemd":
        check_systemd_root_names(base, "cgroupRoot", per_qos=cgroups_per_qos)
    to_path = systemd_path if driver == "systemd" else cgroupfs_path

    nodes: list[CgroupNode] = []
    for i in range(1, len(base) + 1):
        nodes.append(CgroupNode(path=to_path(base[:i]), kind="root", writer="kubelet"))

    # MemoryQoS with memoryReservationPolicy TieredReservation (cgroup v2):
    # the QoS container manager's setMemoryQoS protects the Guaranteed and
    # Burstable pods' memory requests (pod-level requests honoured whatever
    # the gate) instead of resetting the protection to 0.
    tiered = version == 2 and facts.memory_qos and facts.memory_reservation_policy == "TieredReservation"
    active = [(p.pod, p.qos_class) for p in pods.values()] + list(other_active)
    mem_requests = {
        qos: sum(_value(pod_requests(p, pod_level_resources=True), "memory") for p, q in active if q == qos)
        for qos in ("Guaranteed", "Burstable")
    }
    if not cgroups_per_qos:
        named = bool(base) or bool(update_root)
        plan = _plan_without_qos(pods, facts, driver, version, base, nodes, step, unplanned, named)
        guarded = sorted({_container_id(p.uid, c.name) for p, _ in other_active for c in p.all_containers()}
                         | {_container_id(p.uid, "") for p, _ in other_active})
        return dataclasses.replace(plan, guarded=tuple(guarded))
    # kubepods: sized from allocatable when node allocatable is enforced on
    # pods (createNodeAllocatableCgroups), else from the capacity
    alloc = facts.allocatable if enforce_pods or facts.capacity is None else facts.capacity
    unbounded = dict.fromkeys(facts.hugepage_sizes, HUGETLB_UNBOUNDED)
    kube_files = _cpu_files(version, milli_cpu_to_shares(_milli(alloc, "cpu")), None, None, runtime=False)
    kube_files += _memory_files(version, _value(alloc, "memory"), swap=False)
    # Created with the allocatable huge page pools as limits, but the QoS
    # container manager's UpdateCgroups (at start, on every pod sync, every
    # minute) treats kubepods as the Guaranteed tier and makes its huge page
    # limits unbounded like the other tiers': that is what stays.
    kube_files += _hugetlb_files(version, unbounded, facts.hugepage_sizes)
    if version == 2:
        # qos_container_manager_linux.go Start: stale memory protection reset
        # (MemoryQoS off, or memoryReservationPolicy None, the default)
        kube_min = mem_requests["Guaranteed"] + mem_requests["Burstable"] if tiered else 0
        kube_low = mem_requests["Burstable"] if tiered else 0
        kube_files += [CgroupFile("memory.min", str(kube_min)), CgroupFile("memory.low", str(kube_low))]
    # getCgroupConfig: kubepods gets every CPU when the CPU manager has no
    # allocatable CPUs
    kube_cpus = _node_cpus(facts)
    kubepods = [*base, "kubepods"]
    nodes.append(
        CgroupNode(
            path=to_path(kubepods), kind="node", writer="kubelet",
            files=(*_cpuset_files(kube_cpus, None), *kube_files), cpus=kube_cpus,
        )
    )  # fmt: skip

    burstable_milli = sum(
        _milli(pod_requests(p.pod, pod_level_resources=facts.pod_level_resources), "cpu")
        for p in pods.values()
        if p.qos_class == "Burstable"
    ) + sum(
        _milli(pod_requests(p, pod_level_resources=facts.pod_level_resources), "cpu")
        for p, q in other_active
        if q == "Burstable"
    )
    tiers = (
        ("Guaranteed", None),
        ("Burstable", milli_cpu_to_shares(burstable_milli)),
        ("BestEffort", MIN_SHARES),
    )
    # Depth first: each tier, then its pods, each pod then its containers.
    for qos, shares in tiers:
        if shares is not None:
            files = _cpu_files(version, shares, None, None, runtime=False)
            files += _hugetlb_files(version, unbounded, facts.hugepage_sizes)
            if version == 2 and qos == "Burstable":
                low = mem_requests["Burstable"] if tiered else 0
                files.append(CgroupFile("memory.low", str(low)))  # the same reset, or the protection
            tier_path = to_path([*kubepods, qos.lower()])
            nodes.append(CgroupNode(path=tier_path, kind="qos", writer="kubelet", files=tuple(files)))
        members = [u for u in pods if pods[u].qos_class == qos]
        nodes += _pod_subtrees(members, pods, facts, driver, version, kubepods, to_path, uid_paths or {})
    return CgroupPlan(
        driver=driver, version=version, step=step, nodes=tuple(nodes), unplanned=tuple(unplanned)
    )


def _root_files(facts: NodeFacts, version: int) -> list[CgroupFile]:
    """What ``enforceNodeAllocatableCgroups`` writes into the cgroup root
    without cgroupsPerQOS: the capacity's CPU shares, memory and huge page
    limits (no QoS container manager makes them unbounded), every CPU when
    the CPU manager has no allocatable CPUs, and on cgroup v2 the memory
    protection reset when MemoryQoS is off."""
    sized = facts.capacity if facts.capacity is not None else facts.allocatable
    limits = {size: _value(sized, hugepage_resource_name(size)) for size in facts.hugepage_sizes}
    files = _cpu_files(version, milli_cpu_to_shares(_milli(sized, "cpu")), None, None, runtime=False)
    files += _memory_files(version, _value(sized, "memory"), swap=False)
    files += _hugetlb_files(version, limits, facts.hugepage_sizes)
    if version == 2 and not facts.memory_qos:
        files += [CgroupFile("memory.min", "0"), CgroupFile("memory.low", "0")]
    return [*_cpuset_files(_node_cpus(facts), None), *files]


def _node_cpus(facts: NodeFacts) -> CPUSet | None:
    """``getCgroupConfig``'s cpuset: every CPU when the CPU manager's
    allocatable set (``GetAllocatableCPUs``) is empty: always under
    ``none``, and under ``static`` when the reservation takes every CPU."""
    allocatable_cpus = (
        CPUSet() if facts.cpu_manager_policy == CPU_POLICY_NONE else facts.all_cpus.difference(facts.reserved_cpus)
    )
    return None if allocatable_cpus else facts.all_cpus


#: containerd's default cgroup parent of a pod's containers when the kubelet
#: names none (its CRI namespace)
RUNTIME_DEFAULT_PARENT = "k8s.io"


def _plan_without_qos(
    pods: Mapping[str, PlannedPod],
    facts: NodeFacts,
    driver: Driver,
    version: int,
    base: list[str],
    nodes: list[CgroupNode],
    step: int | None,
    unplanned: Sequence[str],
    named: bool,
) -> CgroupPlan:
    """The tree with ``cgroupsPerQOS: false``: the pod container manager and
    the QoS container manager are the no-op ones (no pod cgroups, no
    kubepods or tiers), and the kubelet hands the runtime an empty cgroup
    parent; the node allocatable root is the cgroup root itself, updated
    when its name is not empty (``named``: ``//`` is updated, at ``/``, the
    path ``""`` here; ``/`` and no root are not). Containers (and the
    sandbox) go where the runtime puts a container with no parent:
    containerd's default ``k8s.io/<id>`` (their values are the kubelet's,
    as with a parent). With the systemd driver no sandbox can start there
    (runc refuses containerd's default path): none is planned, the plan's
    notes say why."""
    if named:
        # enforceNodeAllocatableCgroups: "if len(cm.cgroupRoot) > 0" Update
        cpus = _node_cpus(facts)
        node = CgroupNode(path=nodes[-1].path if base else "", kind="root", writer="kubelet",
                          files=tuple(_root_files(facts, version)), cpus=cpus)  # fmt: skip
        if base:
            nodes[-1] = node
        else:
            nodes.insert(0, node)
    if pods and driver == "systemd":
        # containerd keeps its default cgroups path "/k8s.io/<id>" for a
        # sandbox the kubelet names no parent for; runc's systemd driver
        # takes only "slice:prefix:name" (libcontainer/specconv
        # CreateCgroupConfig) and refuses it: no sandbox starts
        note = (
            "cgroupsPerQOS: false with the systemd driver: the kubelet gives containerd no cgroup parent, so "
            "containerd keeps its default cgroups path /k8s.io/<id>, which runc's systemd driver refuses "
            '(expected cgroupsPath to be of format "slice:prefix:name" for systemd cgroups, got "/k8s.io/<id>" '
            f"instead): no pod sandbox or container of the {len(pods)} running "
            f"pod{'s' if len(pods) != 1 else ''} can start (the managers' CPUs and memory stay assigned to "
            "them); none is planned"
        )
        return CgroupPlan(driver=driver, version=version, step=step, nodes=tuple(nodes), unplanned=tuple(unplanned),
                          notes=(note,))  # fmt: skip
    if pods and all(n.path != RUNTIME_DEFAULT_PARENT for n in nodes):
        nodes.append(CgroupNode(path=RUNTIME_DEFAULT_PARENT, kind="root", writer="runtime"))
    for qos in ("Guaranteed", "Burstable", "BestEffort"):
        members = sorted((u for u in pods if pods[u].qos_class == qos), key=lambda u: (pods[u].pod.ref, u))
        for uid in members:
            planned = pods[uid]
            sandbox_id = _container_id(uid, "")
            nodes.append(
                CgroupNode(
                    path=f"{RUNTIME_DEFAULT_PARENT}/{sandbox_id}", kind="sandbox", writer="runtime",
                    pod=planned.pod.ref, pod_uid=uid, container_id=sandbox_id,
                )
            )  # fmt: skip
            for result in planned.containers:
                cid = _container_id(uid, result.name)
                nodes.append(_container_node(f"{RUNTIME_DEFAULT_PARENT}/{cid}", cid, planned, result, facts, version))
    return CgroupPlan(driver=driver, version=version, step=step, nodes=tuple(nodes), unplanned=tuple(unplanned))


def _pod_subtrees(
    uids: Sequence[str],
    pods: Mapping[str, PlannedPod],
    facts: NodeFacts,
    driver: Driver,
    version: int,
    kubepods: list[str],
    to_path: Callable[[Sequence[str]], str],
    uid_paths: Mapping[str, str],
) -> list[CgroupNode]:
    nodes: list[CgroupNode] = []
    for uid in sorted(uids, key=lambda u: (pods[u].pod.ref, u)):
        planned = pods[uid]
        where = uid_paths.get(uid, "metadata.uid")
        comp = _check_component(f"pod{uid}", "pod cgroup name", where)
        parent = kubepods if planned.qos_class == "Guaranteed" else [*kubepods, planned.qos_class.lower()]
        pod_components = [*parent, comp]
        pod_path = to_path(pod_components)
        problem = name_problem(pod_path.rpartition("/")[2])
        if problem is not None:  # the systemd slice name is longer than pod<UID>
            raise InputError(
                f"pod UID {short_name(uid)!r}: cgroup name {short_name(pod_path.rpartition('/')[2])!r} {problem}",
                path=where,
            )
        nodes.append(_pod_node(pod_path, planned, facts, version))

        def child(cid: str, pod_path: str = pod_path) -> str:
            if driver == "systemd":
                return f"{pod_path}/cri-containerd-{cid}.scope"
            return f"{pod_path}/{cid}"

        sandbox_id = _container_id(uid, "")
        nodes.append(
            CgroupNode(
                path=child(sandbox_id), kind="sandbox", writer="runtime", pod=planned.pod.ref,
                pod_uid=uid, container_id=sandbox_id,
            )
        )  # fmt: skip
        for result in planned.containers:
            cid = _container_id(uid, result.name)
            nodes.append(_container_node(child(cid), cid, planned, result, facts, version))
    return nodes


def plan_document(plan: CgroupPlan) -> dict[str, object]:
    """The plan as JSON-ready data (``podnuma cgroups plan -o json``)."""
    nodes: list[dict[str, object]] = []
    for n in plan.nodes:
        entry: dict[str, object] = {"path": "/" + n.path, "kind": n.kind, "writer": n.writer}
        if n.pod is not None:
            entry["pod"] = n.pod
            entry["podUID"] = n.pod_uid
        if n.container is not None:
            entry["container"] = n.container
        if n.container_id is not None:
            entry["containerID"] = n.container_id
        entry["files"] = {f.name: f.value for f in n.files}
        optional = [f.name for f in n.files if f.optional]
        if optional:
            entry["ifPresent"] = optional
        nodes.append(entry)
    doc: dict[str, object] = {
        "driver": plan.driver,
        "cgroupVersion": plan.version,
        "step": plan.step,
        "cgroups": nodes,
        "unplanned": list(plan.unplanned),
    }
    if plan.notes:
        doc["notes"] = list(plan.notes)
    return doc

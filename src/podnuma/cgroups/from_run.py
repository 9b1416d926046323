"""A scenario's run -> :class:`~podnuma.cgroups.plan.CgroupPlan` (pure).

Where the cgroups go follows the kubelet configuration's ``cgroupRoot`` and
``cgroupsPerQOS`` as kubelet v1.37 resolves them (cmd/kubelet/app/server.go:
``--cgroup-root`` on the command line in place of the file's field, ``/``
when ``cgroupsPerQOS`` and no root; ``cm.NodeAllocatableRoot``;
pkg/kubelet/cm/container_manager_linux.go ``NewContainerManager``), after
the start-up checks of ``enforceNodeAllocatable``
(pkg/kubelet/apis/config/validation/validation.go).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from podnuma.api.kubeletconfig import (
    ENFORCE_KUBE,
    ENFORCE_KUBE_COMPRESSIBLE,
    ENFORCE_PODS,
    ENFORCE_SYSTEM,
    ENFORCE_SYSTEM_COMPRESSIBLE,
    KubeletConfig,
    effective_reserved,
)
from podnuma.api.pod import Pod
from podnuma.api.qos import compute_pod_qos
from podnuma.api.quantity import Quantity
from podnuma.api.resources import hugepage_resource_name
from podnuma.cgroups.plan import (
    QUOTA_PERIOD,
    CgroupPlan,
    Driver,
    NodeFacts,
    ReservedEnforcement,
    is_named_root,
    parse_cgroup_root,
    plan_from_pods,
    reserved_cgroup_name,
    reserved_nodes,
    running_pods,
)
from podnuma.cm.container_manager import go_int64
from podnuma.errors import InputError, step_out_of_range
from podnuma.inputs.overrides import OPTION, set_by
from podnuma.inputs.scenario import Scenario
from podnuma.machine.topology import Machine
from podnuma.scenario.run import RunResult, run_scenario

__all__ = [
    "CgroupLayout", "cgroup_layout", "config_layout", "node_facts", "plan_cgroups", "reserved_enforcement_notes",
    "reserved_enforcements",
]

@dataclass(frozen=True)
class CgroupLayout:
    """Where the kubelet puts the cgroups it manages: ``root`` the cgroup
    root's components (``()``: ``/``), ``per_qos`` its ``cgroupsPerQOS``,
    ``enforce_pods``: ``pods`` in ``enforceNodeAllocatable``; ``named``:
    the root is a non-empty cgroup name (``//`` is, naming ``/``: without
    ``cgroupsPerQOS`` the kubelet updates it;
    :func:`~podnuma.cgroups.plan.is_named_root`; ``None``: when ``root``
    has components)."""

    root: tuple[str, ...] = ()
    per_qos: bool = True
    enforce_pods: bool = True
    named: bool | None = None


def cgroup_layout(scenario: Scenario, driver: Driver, flag: str | None = None) -> CgroupLayout:
    """The cgroup root and ``cgroupsPerQOS`` the kubelet runs with.

    ``flag``: the kubelet's ``--cgroup-root`` (podnuma's option of that
    name), which wins over the configuration's ``cgroupRoot`` as a flag on
    the kubelet's command line wins over its configuration file; ``None``
    when not given. With ``cgroupsPerQOS`` (the default) an empty root is
    ``/``. (The kubelet refuses to start on ``enforceNodeAllocatable``
    values ``cgroupsPerQOS: false`` cannot honour: the scenario's run
    raises that, :func:`~podnuma.api.kubeletconfig.validate_kubelet_config`.)
    The root's value is read as
    :func:`~podnuma.cgroups.plan.parse_cgroup_root` reads it; a bad one is
    an :class:`InputError` at ``--cgroup-root`` or at the field (or
    ``--set``) it came from."""
    if flag is not None:
        return config_layout(scenario.config, driver, flag)
    try:
        return config_layout(scenario.config, driver)
    except InputError as err:
        if set_by("cgroupRoot", scenario.overrides) is not None:
            raise InputError(err.message, path="cgroupRoot", file=OPTION) from None
        if scenario.kubelet_config_file is not None:
            raise InputError(err.message, path="cgroupRoot", file=scenario.kubelet_config_file) from None
        raise scenario.input_error(InputError(err.message, path="kubeletConfig.cgroupRoot")) from None


def config_layout(config: KubeletConfig, driver: Driver, flag: str | None = None) -> CgroupLayout:
    """:func:`cgroup_layout` of a decoded configuration (``flag``: the
    kubelet's ``--cgroup-root`` in place of its ``cgroupRoot``); a root the
    driver cannot name is an :class:`InputError` at ``--cgroup-root`` or
    ``cgroupRoot`` (no file: the caller knows it)."""
    settings = config.cgroups
    per_qos = settings.cgroups_per_qos
    enforce_pods = ENFORCE_PODS in settings.enforce_node_allocatable
    value, where = (settings.cgroup_root, "cgroupRoot") if flag is None else (flag, "--cgroup-root")
    value = _defaulted(value, per_qos)
    root = parse_cgroup_root(value, driver, where, per_qos=per_qos)
    return CgroupLayout(root, per_qos, enforce_pods, is_named_root(value))


def _defaulted(root: str, per_qos: bool) -> str:
    """server.go: with cgroupsPerQOS and no root, ``/``."""
    return "/" if per_qos and root == "" else root


def node_facts(machine: Machine, config: KubeletConfig, run: RunResult, step: int) -> NodeFacts:
    """Capacity minus kube- and system-reserved (the kubepods limits),
    the CPU manager policy, page sizes, gates, the shared pool after ``step``.
    The capacity is the kubelet's: cadvisor's byte counts as ``int64(...)``
    (:func:`~podnuma.cm.container_manager.go_int64`: 2^63 bytes or more wrap)."""
    capacity: dict[str, Quantity] = {
        "cpu": Quantity.from_int(machine.topology.num_cpus),
        "memory": Quantity.from_int(go_int64(machine.memory_capacity()), binary=True),
    }
    sizes = tuple(sorted(machine.hugepage_capacity()))
    for size, total in machine.hugepage_capacity().items():
        capacity[hugepage_resource_name(size)] = Quantity.from_int(go_int64(total), binary=True)
    zero = Quantity.zero()
    allocatable: dict[str, Quantity] = {}
    kube, system = effective_reserved(config)  # reservedSystemCPUs counts as system-reserved CPU
    for name, cap in capacity.items():
        value = cap
        for reserved in (system, kube):
            if name in reserved:
                value = value - reserved[name]
        allocatable[name] = value if value >= zero else zero
    gates = config.feature_gates
    default = run.steps[step].default_cpuset if run.steps else run.machine.topology.cpus()
    settings = config.cgroups
    period = settings.cpu_cfs_quota_period_us
    return NodeFacts(
        all_cpus=machine.topology.cpus(),
        cpu_manager_policy=config.cpu_manager_policy,
        allocatable=allocatable,
        hugepage_sizes=sizes,
        pod_level_resources=gates.enabled("PodLevelResources"),
        memory_qos=gates.enabled("MemoryQoS"),
        pod_level_resource_managers=gates.enabled("PodLevelResourceManagers"),
        default_cpuset=default,
        reserved_cpus=run.node.reserved_cpus,
        cpu_cfs_quota=settings.cpu_cfs_quota,
        pod_period=period,
        container_period=period if gates.enabled("CustomCPUCFSQuotaPeriod") else QUOTA_PERIOD,
        pod_pids_limit=settings.pod_pids_limit,
        single_process_oom_kill=bool(settings.single_process_oom_kill),
        memory_throttling_factor=settings.memory_throttling_factor,
        memory_reservation_policy=settings.memory_reservation_policy,
        capacity=capacity,
    )


def plan_cgroups(
    scenario: Scenario,
    run: RunResult | None = None,
    *,
    step: int | None = None,
    driver: Driver = "systemd",
    version: int = 2,
    cgroup_root: Sequence[str] | str | None = None,
) -> CgroupPlan:
    """The cgroups after ``step`` (0-based; default the last step).

    ``cgroup_root``: ``None``, the configuration's ``cgroupRoot``; a string,
    the kubelet's ``--cgroup-root`` flag in its place; components, the root
    already parsed. ``cgroupsPerQOS`` is the configuration's either way
    (see :func:`cgroup_layout`).

    The scenario runs first (``run`` given: it ran): the kubelet validates
    its configuration at start (cmd/kubelet/app/server.go
    ``NewKubeletCommand``: ``ValidateKubeletConfiguration``) long before it
    resolves the cgroup root (``run``: ``cm.NodeAllocatableRoot``), so a
    configuration it refuses is reported before a root it cannot use."""
    if run is None:
        run = run_scenario(scenario)
    if isinstance(cgroup_root, str) or cgroup_root is None:
        layout = cgroup_layout(scenario, driver, cgroup_root)
    else:
        layout = dataclasses.replace(cgroup_layout(scenario, driver), root=tuple(cgroup_root), named=None)
    if not run.steps:
        if step is not None:  # (--step N: said as every command that takes it says it)
            raise step_out_of_range(step, 0, scenario.name)
        # (the kubelet's own cgroup code, as the oracle runs it, needs a step to plan after)
        raise InputError("the scenario has no steps", path="steps", file=scenario.name)
    last = len(run.steps) - 1
    if step is None:
        step = last
    if step < 0 or step > last:
        raise step_out_of_range(step, last + 1, scenario.name)
    pods: dict[int, Pod] = {s.index: s.pod for s in scenario.steps if s.pod is not None}
    running = running_pods(run.steps, pods, step)
    known: set[str] = set()
    if scenario.cpu_checkpoint is not None:
        known.update(scenario.cpu_checkpoint.entries)
    if scenario.memory_checkpoint is not None:
        known.update(scenario.memory_checkpoint.entries)
    # pods running before the first step (their cgroups were made in the
    # kubelet's earlier life, with values this run cannot know)
    known.update(p.uid for p in scenario.running_pods)
    # gone: removed, or re-admitted with a spec (running, or rejected and so
    # terminal: the kubelet kills a pod it refuses)
    removed = {s.pod_uid for s in run.steps[: step + 1] if s.op in ("removePod", "addPod")}
    unplanned = sorted(known - set(running) - removed)
    facts = node_facts(scenario.machine, scenario.config, run, step)
    # Pods running since before the start (with their specs) are active
    # pods of the kubelet: their requests count in the QoS tiers' values.
    gates = scenario.config.feature_gates
    still = set(unplanned)
    earlier = tuple(
        (p, compute_pod_qos(
            p, pod_level_resources=gates.enabled("PodLevelResources"),
            fix_kubelet_qos_class=gates.enabled("PodLevelResourcesFixKubeletQOSClass"),
        ))
        for p in scenario.running_pods
        if p.uid in still
    )  # fmt: skip
    # a bad UID is reported at the step that brought the pod
    uid_paths = {
        s.pod.uid: f"steps[{s.index}].addPod.metadata.uid"
        for s in scenario.steps
        if s.pod is not None and s.pod.uid in running
    }
    try:
        plan = plan_from_pods(
            running, facts, driver=driver, version=version, cgroup_root=layout.root,
            step=step, unplanned=unplanned, uid_paths=uid_paths, other_active=earlier,
            cgroups_per_qos=layout.per_qos, enforce_pods=layout.enforce_pods, update_root=layout.named,
        )  # fmt: skip
    except InputError as err:
        if err.path.startswith("steps["):  # about the file (not --cgroup-root)
            raise scenario.input_error(err) from None
        raise
    try:
        reserved = reserved_nodes(reserved_enforcements(scenario.config), facts, driver=driver, version=version)
    except InputError as err:
        raise _config_error(scenario, err) from None
    notes = reserved_enforcement_notes(scenario.config, {n.path for n in reserved} if driver == "systemd" else None)
    if reserved:
        own = {n.path for n in plan.nodes}
        for node in reserved:
            if node.path in own:
                # setupNode creates kubepods and the QoS tiers before the
                # reserved enforcement: the cgroup exists, and its values
                # are both the kubelet's node-level ones and the reserved ones
                notes += (f"the reserved cgroup /{node.path} is one the kubelet itself manages: the kubelet updates "
                          "it with both its own values and the reserved ones (in an order its goroutines decide); "
                          "the plan writes the reserved ones last",)
        plan = dataclasses.replace(plan, nodes=plan.nodes + reserved)
    return dataclasses.replace(plan, notes=plan.notes + notes) if notes else plan


def _config_error(scenario: Scenario, err: InputError) -> InputError:
    """``err`` (at a kubelet configuration field) located where the field
    was set: ``--set``, the kubelet configuration file, or the scenario's
    ``kubeletConfig``."""
    if set_by(err.path, scenario.overrides) is not None:
        return InputError(err.message, path=err.path, file=OPTION)
    if scenario.kubelet_config_file is not None:
        return InputError(err.message, path=err.path, file=scenario.kubelet_config_file)
    return scenario.input_error(InputError(err.message, path=f"kubeletConfig.{err.path}"))


#: enforceNodeAllocatable's reserved enforcements: (the keys, the
#: configuration's cgroup field, its reserved field)
_RESERVED = (
    ((ENFORCE_SYSTEM, ENFORCE_SYSTEM_COMPRESSIBLE), "systemReservedCgroup", "systemReserved"),
    ((ENFORCE_KUBE, ENFORCE_KUBE_COMPRESSIBLE), "kubeReservedCgroup", "kubeReserved"),
)


def reserved_enforcements(config: KubeletConfig) -> tuple[ReservedEnforcement, ...]:
    """``enforceNodeAllocatable``'s reserved enforcements in the order
    ``enforceNodeAllocatableCgroups`` (pkg/kubelet/cm/
    node_container_manager_linux.go) makes them: ``system-reserved``,
    ``kube-reserved``, then the ``-compressible`` forms; each with the
    reserved list as the kubelet parsed it (:func:`effective_reserved`)."""
    enforced = config.cgroups.enforce_node_allocatable
    kube, system = effective_reserved(config)
    table = (
        (ENFORCE_SYSTEM, config.system_reserved_cgroup, system, False, "systemReservedCgroup", "System Reserved"),
        (ENFORCE_KUBE, config.kube_reserved_cgroup, kube, False, "kubeReservedCgroup", "Kube Reserved"),
        (ENFORCE_SYSTEM_COMPRESSIBLE, config.system_reserved_cgroup, system, True, "systemReservedCgroup",
         "System Reserved Compressible"),
        (ENFORCE_KUBE_COMPRESSIBLE, config.kube_reserved_cgroup, kube, True, "kubeReservedCgroup",
         "Kube Reserved Compressible"),
    )  # fmt: skip
    return tuple(
        ReservedEnforcement(key, cgroup, reserved, compressible, field, words)
        for key, cgroup, reserved, compressible, field, words in table
        if key in enforced
    )


def reserved_enforcement_notes(config: KubeletConfig, systemd: set[str] | None = None) -> tuple[str, ...]:
    """What a plan's reader must know of the reserved cgroups it holds
    (:func:`reserved_enforcements`): the kubelet does not create them; it
    refuses to start when one does not exist (``enforceExistingCgroup``:
    the cgroup manager's ``Validate``), and ``cgroups apply`` writes into
    one only where it exists. One line each, for the plan's document.
    ``systemd``: with that driver, the paths of the plan's reserved
    cgroups (a name the driver reads as another path is said so)."""
    notes: list[str] = []
    for keys, field, reserved in _RESERVED:
        given = [k for k in keys if k in config.cgroups.enforce_node_allocatable]
        if not given:
            continue
        name = config.system_reserved_cgroup if field == "systemReservedCgroup" else config.kube_reserved_cgroup
        values = f"{reserved}'s CPU shares" if all(k.endswith("-compressible") for k in given) else (
            f"{reserved}'s values")
        where = ""
        if systemd is not None:
            path = reserved_cgroup_name(name, "systemd", field)[1]
            if path.strip("/") != name.strip("/"):
                where = f" (the systemd driver reads it as the slice /{path}: only the name's last element counts)"
        unit = " (with the systemd driver: a loaded slice unit)" if systemd is not None else ""
        notes.append(
            f"{field} {name!r}{where} ({', '.join(given)} in enforceNodeAllocatable): the kubelet updates it "
            f"with {values} at start (entries of kind 'reserved'; every huge page size limited to 0: a service "
            "there holding huge pages makes that write fail and the kubelet not start) and does not start if it "
            f"does not exist{unit}; podnuma's apply writes into it only where it exists, never creating it"
        )
    return tuple(notes)

"""Turn the CPU-manager unit-test case data into ``podnuma simulate``
scenario documents, run them through the real command line, and read the
output document back.

The unit tables drive the policy objects directly; here the same data goes
through the whole kubelet path (scenario loader, machine discovery from a
``node.cpus`` table, kubelet configuration, checkpoint restore and start-up
validation, topology-manager admission, node-allocatable fit, JSON output).

A unit case is not always a state the kubelet can start from. What this
module does about it, in :func:`plan_state`:

* ``placeholder``: CPUs of the machine in neither the case's default set
  nor its assignments (nor the strictly reserved set) are given to a
  placeholder running pod in the checkpoint. For the policy they are
  unavailable either way; the kubelet's start-up check wants every CPU
  accounted for.
* ``strict``: reserved CPUs that are absent from the case's default set are
  a state the kubelet only accepts with ``strict-cpu-reservation``; that
  option is added (the available CPUs are default - reserved either way).
* ``reserve-missing``: a case with no reserved CPUs (the kubelet's static
  policy refuses to start without a CPU reservation) whose state leaves some
  CPUs out reserves exactly those, strictly.
* ``rename``: checkpoint containers of the pod under test that the pod's
  manifest does not have move to another pod UID (otherwise the kubelet's
  stale-state collection would drop them when the pod is admitted; the
  policy does not look at other containers' pod UIDs).
* Kubernetes names: container and pod names are lower-cased and ``_`` is
  replaced by ``-`` (API validation wants DNS labels); UIDs stay as written.

Anything else that cannot be expressed raises :class:`NotExpressible` with
a one-line reason; the tests turn it into ``pytest.skip``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from podnuma.api.pod import Container, Pod
from podnuma.cli import cli
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, cpu_checkpoint_object
from podnuma.cm.cpumanager.policy_options import (
    FULL_PCPUS_ONLY_OPTION,
    STRICT_CPU_RESERVATION_OPTION,
    parse_go_bool,
)
from podnuma.cm.cpumanager.policy_static import new_static_policy
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.errors import KubeletStartupError
from podnuma.inputs.discover.table import load_table
from podnuma.machine.cpuset import EMPTY, CPUSet
from podnuma.machine.topology import CPUTopology

__all__ = [
    "NotExpressible",
    "StatePlan",
    "SimResult",
    "k8s_name",
    "node_table",
    "pod_manifest",
    "cpu_state_object",
    "kubelet_config",
    "plan_state",
    "scenario",
    "simulate",
    "check_topology",
    "hint_json",
    "PLACEHOLDER_UID",
]

PLACEHOLDER_UID = "placeholder-pod"
PLACEHOLDER_CONTAINER = "held"
NODE_MEMORY = "256Gi"

Assignments = Mapping[str, Mapping[str, CPUSet]]


class NotExpressible(Exception):
    """The case has no equivalent scenario (the message says why)."""


def k8s_name(name: str) -> str:
    """A unit-test name as a valid DNS label."""
    return name.lower().replace("_", "-")


# -- the machine ---------------------------------------------------------------


def check_topology(topo: CPUTopology) -> None:
    """Fixture topologies whose declared counts the kubelet's Discover
    cannot produce from their own CPU table cannot be a node."""
    if topo.num_cpus != len(topo.cpu_info):
        raise NotExpressible(
            f"fixture declares NumCPUs={topo.num_cpus} but its CPU table has "
            f"{len(topo.cpu_info)} CPUs (cpus per core/uncore differ from any real node)"
        )
    machine = load_table(node_table(topo))
    d = machine.topology
    if d.num_cores != topo.num_cores and topo.num_cores != 0:
        raise NotExpressible(
            f"fixture declares NumCores={topo.num_cores}; its CPU table has {d.num_cores} cores"
        )
    if d.num_sockets != topo.num_sockets:
        raise NotExpressible(
            f"fixture declares NumSockets={topo.num_sockets}; its CPU table has {d.num_sockets}"
        )
    # Discover names a core by its lowest thread id; a fixture whose core ids
    # are an order-preserving relabelling of that behaves the same.
    rename: dict[int, int] = {}
    for cpu, info in topo.cpu_info.items():
        got = d.cpu_info[cpu]
        if (got.numa_node, got.socket, got.uncore_cache) != (
            info.numa_node, info.socket, info.uncore_cache
        ):
            raise NotExpressible(f"Discover places CPU {cpu} differently from the fixture")
        if rename.setdefault(info.core, got.core) != got.core:
            raise NotExpressible(
                f"fixture core {info.core} has threads on different sockets/NUMA nodes "
                f"(a kubelet core never does)"
            )
    pairs = sorted(rename.items())
    if any(b[1] <= a[1] for a, b in zip(pairs, pairs[1:], strict=False)):
        raise NotExpressible(
            "fixture core ids are not in the order of each core's lowest thread id, which is "
            "how Discover (getUniqueCoreID) names cores; core order drives the allocation"
        )


def node_table(topo: CPUTopology, memory: str = NODE_MEMORY) -> dict[str, Any]:
    """``node`` in the ``cpus`` form: one row per CPU (the fixture's core
    labels; Discover names each core by its lowest thread), plenty of memory
    on every NUMA node."""
    rows = [
        {
            "id": cpu,
            "core": info.core,
            "socket": info.socket,
            "numaNode": info.numa_node,
            "uncoreCache": info.uncore_cache,
        }
        for cpu, info in sorted(topo.cpu_info.items())
    ]
    nodes = sorted({info.numa_node for info in topo.cpu_info.values()})
    return {"cpus": rows, "memory": {str(n): {"memory": memory} for n in nodes}}


# -- pods ------------------------------------------------------------------------


def _container_manifest(c: Container) -> dict[str, Any]:
    out: dict[str, Any] = {"name": k8s_name(c.name), "image": "busybox"}
    resources: dict[str, Any] = {}
    if c.requests:
        resources["requests"] = {k: str(v) for k, v in c.requests.items()}
    if c.limits:
        resources["limits"] = {k: str(v) for k, v in c.limits.items()}
    if resources:
        out["resources"] = resources
    if c.restart_policy is not None:
        out["restartPolicy"] = c.restart_policy
    return out


def pod_manifest(pod: Pod) -> dict[str, Any]:
    """The unit test's pod as a v1 Pod manifest (same UID)."""
    spec: dict[str, Any] = {"containers": [_container_manifest(c) for c in pod.containers]}
    if pod.init_containers:
        spec["initContainers"] = [_container_manifest(c) for c in pod.init_containers]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": k8s_name(pod.name), "namespace": pod.namespace, "uid": pod.uid},
        "spec": spec,
    }


# -- state ---------------------------------------------------------------------------


def cpu_state_object(default: CPUSet, assignments: Assignments) -> dict[str, Any]:
    """``state.cpuManager``: the kubelet's cpu_manager_state object."""
    entries = {
        uid: {k8s_name(name): cset for name, cset in containers.items()}
        for uid, containers in assignments.items()
    }
    return cpu_checkpoint_object(
        CPUCheckpointData(policy_name="static", default_cpuset=default, entries=entries)
    )


@dataclass
class StatePlan:
    """What the scenario starts from, and how it differs from the case."""

    default: CPUSet
    assignments: dict[str, dict[str, CPUSet]]
    options: dict[str, str]
    reserved_system_cpus: CPUSet | None
    kube_reserved_cpu: int | None
    reserved: CPUSet  # what the policy reserves
    notes: list[str] = field(default_factory=list)


def _reserved_pick(
    topo: CPUTopology, num_reserved: int, reserved: CPUSet, options: Mapping[str, str] | None,
    gates: Any,
) -> CPUSet:
    class _NoHint:
        def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
            raise AssertionError("unused")

    try:
        return new_static_policy(topo, num_reserved, reserved, _NoHint(), options, gates).reserved_cpus
    except KubeletStartupError as e:
        raise NotExpressible(f"the kubelet refuses the reservation: {e}") from None


def plan_state(
    topo: CPUTopology,
    default: CPUSet,
    assignments: Assignments,
    *,
    num_reserved: int,
    reserved: CPUSet = EMPTY,
    options: Mapping[str, str] | None = None,
    gates: Any,
    pod: Pod | None = None,
    allow_emulation: bool = True,
) -> StatePlan:
    """The starting state for a case (see the module docstring).

    ``allow_emulation=False`` is for cases that test start-up validation
    itself: the state is used exactly as given.
    """
    opts = dict(options or {})
    strict = parse_go_bool(opts.get(STRICT_CPU_RESERVATION_OPTION, "false"))
    full_pcpus = parse_go_bool(opts.get(FULL_PCPUS_ONLY_OPTION, "false"))
    assigned: dict[str, dict[str, CPUSet]] = {u: dict(c) for u, c in assignments.items()}
    notes: list[str] = []

    # rename: containers of the pod under test that its manifest lacks
    if pod is not None and pod.uid in assigned:
        names = {c.name for c in pod.all_containers()}
        others = {n: c for n, c in assigned[pod.uid].items() if n not in names}
        if others:
            kept = {n: c for n, c in assigned[pod.uid].items() if n in names}
            if kept:
                assigned[pod.uid] = kept
            else:
                del assigned[pod.uid]
            assigned[f"{pod.uid}-other"] = others
            notes.append("rename")

    all_cpus = topo.cpus()
    in_state = default
    for containers in assigned.values():
        for cset in containers.values():
            in_state = in_state | cset
    if allow_emulation:
        if default.is_empty() and assigned:
            raise NotExpressible(
                "empty default set with assignments: the kubelet refuses to start "
                "(default cpuset cannot be empty)"
            )
        if not in_state.is_subset_of(all_cpus):
            raise NotExpressible(
                f"the state holds CPUs {in_state - all_cpus} the topology lacks: the kubelet "
                "refuses to start"
            )

    kube_reserved_cpu: int | None = None
    reserved_system_cpus: CPUSet | None = None
    if num_reserved == 0:
        missing = all_cpus - in_state
        if not allow_emulation or missing.is_empty():
            raise NotExpressible(
                "no reserved CPUs: the kubelet's static policy refuses to start without a CPU "
                "reservation"
                + ("" if not allow_emulation else ", and every CPU is in the case's state")
            )
        reserved_set = missing
        reserved_system_cpus = missing
        if not strict:
            opts[STRICT_CPU_RESERVATION_OPTION] = "true"
            strict = True
        notes.append("reserve-missing")
        if full_pcpus:
            siblings = CPUSet.from_mask(
                _physical_mask(topo, missing)
            ) - missing
            if not (siblings & default).is_empty():
                raise NotExpressible(
                    "no reserved CPUs; reserving the CPUs the state leaves out would also take "
                    f"their core siblings {siblings & default} out of full-pcpus-only's pool"
                )
    else:
        if reserved.is_empty():
            kube_reserved_cpu = num_reserved
        else:
            if reserved.size() != num_reserved:
                raise NotExpressible(
                    f"reserved set {reserved} does not have numReservedCPUs={num_reserved} CPUs "
                    "(reservedSystemCPUs sets both)"
                )
            reserved_system_cpus = reserved
        reserved_set = _reserved_pick(topo, num_reserved, reserved, opts, gates)
        if not strict and not reserved_set.is_subset_of(default):
            if not allow_emulation:
                pass  # start-up validation case: as given
            elif (reserved_set & default).is_empty():
                opts[STRICT_CPU_RESERVATION_OPTION] = "true"
                strict = True
                notes.append("strict")
            else:
                raise NotExpressible(
                    f"reserved CPUs {reserved_set} are partly in the default set {default}: "
                    "the kubelet refuses that with and without strict-cpu-reservation"
                )

    leftover = all_cpus - in_state - (reserved_set if strict else CPUSet())
    if not leftover.is_empty() and allow_emulation:
        assigned.setdefault(PLACEHOLDER_UID, {})[PLACEHOLDER_CONTAINER] = leftover
        notes.append("placeholder")

    return StatePlan(
        default=default,
        assignments=assigned,
        options=opts,
        reserved_system_cpus=reserved_system_cpus,
        kube_reserved_cpu=kube_reserved_cpu,
        reserved=reserved_set,
        notes=notes,
    )


def _physical_mask(topo: CPUTopology, cpus: CPUSet) -> int:
    mask = 0
    for cpu in cpus:
        mask |= topo.details.cpus_in_cores(topo.cpu_info[cpu].core).mask
    return mask


# -- kubelet configuration and the document -------------------------------------------


def kubelet_config(
    plan: StatePlan,
    *,
    gates: Mapping[str, bool] | None = None,
    topology_manager_policy: str = "none",
    topology_manager_scope: str | None = None,
) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "topologyManagerPolicy": topology_manager_policy,
    }
    if topology_manager_scope is not None:
        cfg["topologyManagerScope"] = topology_manager_scope
    if plan.reserved_system_cpus is not None:
        cfg["reservedSystemCPUs"] = str(plan.reserved_system_cpus)
    if plan.kube_reserved_cpu is not None:
        cfg["kubeReserved"] = {"cpu": str(plan.kube_reserved_cpu)}
    if plan.options:
        cfg["cpuManagerPolicyOptions"] = dict(plan.options)
    if gates:
        cfg["featureGates"] = dict(gates)
    return cfg


def scenario(
    topo: CPUTopology,
    plan: StatePlan,
    steps: Sequence[Mapping[str, Any]],
    *,
    gates: Mapping[str, bool] | None = None,
    topology_manager_policy: str = "none",
    topology_manager_scope: str | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": node_table(topo),
        "kubeletConfig": kubelet_config(
            plan,
            gates=gates,
            topology_manager_policy=topology_manager_policy,
            topology_manager_scope=topology_manager_scope,
        ),
        "state": {"cpuManager": cpu_state_object(plan.default, plan.assignments)},
        "steps": list(steps),
    }


# -- running it ------------------------------------------------------------------------


@dataclass
class SimResult:
    exit_code: int
    output: dict[str, Any] | None
    stderr: str

    def step(self, index: int = 0) -> dict[str, Any]:
        assert self.output is not None, self.stderr
        step: dict[str, Any] = self.output["steps"][index]
        return step

    def container(self, name: str, index: int = 0) -> dict[str, Any]:
        for c in self.step(index)["containers"]:
            if c["name"] == k8s_name(name):
                assert isinstance(c, dict)
                return c
        raise KeyError(name)

    @property
    def checkpoint(self) -> dict[str, Any]:
        assert self.output is not None, self.stderr
        ck: dict[str, Any] = self.output["checkpoints"]["cpuManager"]
        return ck


def simulate(doc: Mapping[str, Any], tmp_path: Path, name: str = "scenario.json") -> SimResult:
    """``podnuma simulate FILE -o json`` in-process."""
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json"])
    output = json.loads(result.stdout) if result.exit_code == 0 else None
    return SimResult(result.exit_code, output, result.stderr)


def hint_json(hint: TopologyHint) -> dict[str, Any]:
    """A hint as the output document shows it."""
    out: dict[str, Any] = hint.to_json()
    return out

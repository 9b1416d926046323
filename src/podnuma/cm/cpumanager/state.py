"""In-memory CPU manager state.

Mirrors ``pkg/kubelet/cm/cpumanager/state/state.go`` and ``state_mem.go``:
the default (shared) CPU set, per-container exclusive assignments and, since
v1.36, per-pod assignments (pod-level resource managers). The checkpoint
encoding lives in ``checkpoint.py``; this class holds no I/O.
"""

from __future__ import annotations

from podnuma.machine.cpuset import EMPTY, CPUSet

__all__ = ["CPUManagerState", "ContainerCPUAssignments"]

# pod UID -> container name -> CPUs
ContainerCPUAssignments = dict[str, dict[str, CPUSet]]


class CPUManagerState:
    """The mutable state owned by the CPU manager."""

    __slots__ = ("default_cpuset", "assignments", "pod_assignments", "version", "stores")

    def __init__(
        self,
        default_cpuset: CPUSet = EMPTY,
        assignments: ContainerCPUAssignments | None = None,
        pod_assignments: dict[str, CPUSet] | None = None,
    ) -> None:
        self.default_cpuset = default_cpuset
        self.assignments: ContainerCPUAssignments = {
            uid: dict(c) for uid, c in (assignments or {}).items()
        }
        self.pod_assignments: dict[str, CPUSet] = dict(pod_assignments or {})
        # bumped by every writer that adds or replaces container entries
        # (garbage collection relies on it; see podnuma.cm.active)
        self.version = 0
        # bumped by every writer: the kubelet's checkpoint-backed state
        # stores the checkpoint file on each of them (``storeState``), so a
        # state never written since it was restored leaves the file as found
        self.stores = 0

    # -- Reader ---------------------------------------------------------
    def get_cpu_set(self, pod_uid: str, container_name: str) -> CPUSet | None:
        entries = self.assignments.get(pod_uid)  # (no empty dict built per miss)
        return None if entries is None else entries.get(container_name)

    def get_default_cpuset(self) -> CPUSet:
        return self.default_cpuset

    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet:
        cset = self.get_cpu_set(pod_uid, container_name)
        return self.default_cpuset if cset is None else cset

    def get_cpu_assignments(self) -> ContainerCPUAssignments:
        """A copy of the container assignments."""
        return {uid: dict(c) for uid, c in self.assignments.items()}

    def get_pod_cpu_set(self, pod_uid: str) -> CPUSet | None:
        return self.pod_assignments.get(pod_uid)

    # -- Writer ---------------------------------------------------------
    def set_cpu_set(self, pod_uid: str, container_name: str, cset: CPUSet) -> None:
        self.stores += 1
        self.assignments.setdefault(pod_uid, {})[container_name] = cset
        self.version += 1

    def set_default_cpuset(self, cset: CPUSet) -> None:
        self.stores += 1
        self.default_cpuset = cset

    def set_cpu_assignments(self, assignments: ContainerCPUAssignments) -> None:
        self.stores += 1
        self.assignments = {uid: dict(c) for uid, c in assignments.items()}
        self.version += 1

    def set_pod_cpu_set(self, pod_uid: str, cset: CPUSet) -> None:
        self.stores += 1
        self.pod_assignments[pod_uid] = cset

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Drop one container's entry; the pod's map goes when it empties."""
        self.stores += 1
        containers = self.assignments.get(pod_uid)
        if containers is None:
            return
        containers.pop(container_name, None)
        if not containers:
            del self.assignments[pod_uid]

    def delete_pod(self, pod_uid: str) -> None:
        self.stores += 1
        self.pod_assignments.pop(pod_uid, None)

    def clear_state(self) -> None:
        self.stores += 1
        self.default_cpuset = EMPTY
        self.assignments = {}
        self.pod_assignments = {}

    def copy(self) -> CPUManagerState:
        return CPUManagerState(self.default_cpuset, self.assignments, self.pod_assignments)

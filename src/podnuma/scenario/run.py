"""Running a loaded scenario through the kubelet core.

Starts a :class:`podnuma.cm.container_manager.Node` from the scenario's machine,
configuration and checkpoints (the kubelet refusing to start raises
:class:`~podnuma.errors.KubeletStartupError`), plays the steps in order and
collects what the core reports. No I/O: writing checkpoint files and
rendering are the CLI's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from podnuma.buildinfo import mypyc_attr
from podnuma.cm.checkpoint import CheckpointError
from podnuma.cm.container_manager import Node
from podnuma.cm.results import ContainerResult, NodeSummary, PodAllocation, StepResult
from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.scenario import Scenario, Step
from podnuma.inputs.startup import StartupFailure, startup_failure
from podnuma.machine.topology import Machine

__all__ = [
    "RestoredPod", "RunResult", "StartupFailure", "StreamedRun", "gone_since", "play_step",
    "run_scenario",
    "start_node",
]


def _startup_failure(scenario: Scenario, err: KubeletStartupError) -> StartupFailure:
    return startup_failure(
        err,
        file=scenario.name,
        config=scenario.config,
        kubelet_config_file=scenario.kubelet_config_file,
        cpu_state=scenario.cpu_state_path,
        memory_state=scenario.memory_state_path,
        overrides=scenario.overrides,
    )


class RunResult:
    """Everything a scenario run produced.

    ``checkpoints`` are the checkpoint objects (``cpuManager``,
    ``memoryManager``) after the last step, ``checkpoint_files`` the bytes
    the kubelet would have on disk, by file name (``cpu_manager_state``...).
    """

    scenario: str
    machine: Machine
    node: NodeSummary
    steps: tuple[StepResult, ...]
    checkpoints: Mapping[str, Any]
    checkpoint_files: Mapping[str, bytes]
    # the pods running when the node started (restored from the scenario's
    # starting checkpoints) and what each container holds then
    restored: tuple[RestoredPod, ...]

    def __init__(
        self,
        scenario: str,
        machine: Machine,
        node: NodeSummary,
        steps: tuple[StepResult, ...],
        checkpoints: Mapping[str, Any],
        checkpoint_files: Mapping[str, bytes],
        restored: tuple[RestoredPod, ...] = (),
    ) -> None:
        self.scenario = scenario
        self.machine = machine
        self.node = node
        self.steps = steps
        self.checkpoints = checkpoints
        self.checkpoint_files = checkpoint_files
        self.restored = restored

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(scenario={self.scenario!r}, machine={self.machine!r}, node={self.node!r}, steps={self.steps!r}, checkpoints={self.checkpoints!r}, checkpoint_files={self.checkpoint_files!r}, restored={self.restored!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunResult) or other.__class__ is not self.__class__:
            return False
        return (self.scenario, self.machine, self.node, self.steps, self.checkpoints, self.checkpoint_files, self.restored) == (other.scenario, other.machine, other.node, other.steps, other.checkpoints, other.checkpoint_files, other.restored)

    def __hash__(self) -> int:
        return hash((self.scenario, self.machine, self.node, self.steps, self.checkpoints, self.checkpoint_files, self.restored))


class RestoredPod:
    """A pod the starting checkpoints hold: its reference (NAMESPACE/NAME
    when ``state.pods`` names it, else its UID), UID, containers and, for a
    pod-level pod (pod scope with pod-level resources), the pod's own
    reservation as restored (``allocation``: its CPU set and memory
    blocks), else ``None``."""

    pod: str
    uid: str
    containers: tuple[ContainerResult, ...]
    allocation: PodAllocation | None

    def __init__(self, pod: str, uid: str, containers: tuple[ContainerResult, ...],
                 allocation: PodAllocation | None = None) -> None:
        self.pod = pod
        self.uid = uid
        self.containers = containers
        self.allocation = allocation

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(pod={self.pod!r}, uid={self.uid!r}, containers={self.containers!r}, "
                f"allocation={self.allocation!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RestoredPod) or other.__class__ is not self.__class__:
            return False
        return (self.pod, self.uid, self.containers, self.allocation) == (
            other.pod, other.uid, other.containers, other.allocation)

    def __hash__(self) -> int:
        return hash((self.pod, self.uid, self.containers, self.allocation))


def play_step(node: Node, step: Step) -> StepResult:
    """Play one step of a scenario on ``node``."""
    if step.op == "addPod":
        assert step.pod is not None
        return node.add_pod(step.pod, step.index)
    if step.op == "reconcile":
        return node.reconcile(step.index)
    assert step.ref is not None
    if step.op == "removeContainer":
        assert step.container is not None
        return node.remove_container(step.ref, step.container, step.index)
    return node.remove_pod(step.ref, step.index)


def start_node(scenario: Scenario, *, step_pod_resources: bool = True) -> Node:
    """The scenario's node, started (checkpoints restored); start-up
    failures name their place in the input. ``step_pod_resources``: whether
    each step's result carries the PodResources list after it."""
    try:
        return Node(
            scenario.machine,
            scenario.config,
            cpu_checkpoint=scenario.cpu_checkpoint,
            memory_checkpoint=scenario.memory_checkpoint,
            cpu_restore_failure=scenario.cpu_restore_failure,
            memory_restore_failure=scenario.memory_restore_failure,
            running_pods=scenario.running_pods,
            device_checkpoint=scenario.device_checkpoint,
            step_pod_resources=step_pod_resources,
        )
    except CheckpointError:
        raise
    except KubeletStartupError as e:
        raise _startup_failure(scenario, e) from None


def gone_since(results: Sequence[StepResult], step: Step) -> str | None:
    """Why the pod a removal ``step`` names is not running, when an earlier
    step says it: rejected at admission (the kubelet never ran it) or
    removed already. Only podnuma's message says this; the outcome is the
    kubelet's (invalid input at that step)."""
    for r in reversed(results):
        if step.ref not in (r.pod, r.pod_uid):
            continue
        if r.op == "addPod" and not r.admitted:
            return f"it was rejected at step {r.index} ({r.reason})"
        if r.op == "removePod":
            return f"it was removed at step {r.index}"
        return None
    return None


def run_scenario(
    scenario: Scenario,
    *,
    before_step: Callable[[Node, Step], None] | None = None,
    checkpoints: bool = True,
    step_pod_resources: bool = True,
) -> RunResult:
    """Start the node and play every step.

    A step naming a pod or container that is not running raises
    :class:`InputError` at that step's field path, in the scenario's file.
    ``before_step(node, step)`` is called just before each step is played
    (to keep a copy of the node there, say); it must not change the node.
    ``checkpoints=False`` leaves the result's checkpoints empty, for a
    caller that does not use them (encoding them costs time);
    ``step_pod_resources=False`` leaves each step's PodResources list empty
    (see :func:`start_node`), for a caller that does not show it.
    """
    node = start_node(scenario, step_pod_resources=step_pod_resources)
    summary = node.summary()
    restored = tuple(
        RestoredPod(ref, uid, node.container_results(uid), node.pod_allocation(uid))
        for uid, ref in node.running_pods()
    )
    results: list[StepResult] = []
    for step in scenario.steps:
        if before_step is not None:
            before_step(node, step)
        try:
            results.append(play_step(node, step))
        except InputError as e:
            if e.file is not None and e.file != scenario.name:
                raise
            why = gone_since(results, step) if step.op != "addPod" else None
            if why is not None:
                e = InputError(f"{e.message}: {why}", path=e.path, file=e.file)
            raise scenario.input_error(e.at(step.path)) from None
    return RunResult(
        scenario=scenario.name,
        machine=scenario.machine,
        node=summary,
        steps=tuple(results),
        checkpoints=dict(node.checkpoint_objects()) if checkpoints else {},
        checkpoint_files=dict(node.checkpoint_files()) if checkpoints else {},
        restored=restored,
    )


#: how many steps :meth:`StreamedRun.results` reads before playing them
READ_AHEAD: Final = 128


@mypyc_attr(allow_interpreted_subclasses=True)  # (the one-pass run of a file)
class StreamedRun:
    """A run whose step results come one at a time, none of them kept: for
    writing the output document of a long scenario in memory that does not
    grow with its steps (only why each pod that is gone went: a rejection
    or a removal, for :func:`gone_since`'s words).

    The node starts when the object is made (start-up failures are raised
    there); :meth:`results` plays ``steps`` (which may themselves be read
    and validated one at a time) and yields each result; the checkpoints
    are the node's after the steps played so far.
    """

    def __init__(
        self, scenario: Scenario, steps: Iterable[Step], *, step_pod_resources: bool = True
    ) -> None:
        self.scenario = scenario
        self._steps = steps
        self._node = start_node(scenario, step_pod_resources=step_pod_resources)
        self.node: NodeSummary = self._node.summary()
        # why a pod (ref or UID) is gone: the step that rejected it (its
        # index and reason) or removed it (its index); no step result is kept
        self._gone: dict[str, tuple[int, bool, str | None]] = {}

    def results(self) -> Iterator[StepResult]:
        """Each step's result, the steps read :data:`READ_AHEAD` at a time
        before they are played (reading, playing and writing in runs rather
        than interleaved keeps each one's code and data in the processor's
        caches: about a fifth of a step's time, pure or compiled). A step
        the reader refuses is raised once the steps before it have been
        played, as when they are read one at a time: the same first error,
        the same results before it."""
        steps = iter(self._steps)
        ahead: list[Step] = []
        while True:
            refusal: Exception | None = None
            try:
                for step in steps:
                    ahead.append(step)
                    if len(ahead) >= READ_AHEAD:
                        break
            except Exception as e:  # raised after the steps read before it
                refusal = e
            yield from self._play(ahead)
            if refusal is not None:
                raise refusal
            if len(ahead) < READ_AHEAD:
                return
            ahead.clear()

    def _play(self, steps: list[Step]) -> Iterator[StepResult]:
        node, scenario, gone = self._node, self.scenario, self._gone
        for step in steps:
            try:
                # play_step's work, the usual two ops without its call
                op = step.op
                if op == "addPod" and step.pod is not None:
                    result = node.add_pod(step.pod, step.index)
                elif op == "removePod" and step.ref is not None:
                    result = node.remove_pod(step.ref, step.index)
                else:
                    result = play_step(node, step)
            except InputError as e:
                if e.file is not None and e.file != scenario.name:
                    raise
                last = gone.get(step.ref or "") if step.op != "addPod" else None
                if last is not None:  # the words of gone_since
                    index, rejected, reason = last
                    why = (
                        f"it was rejected at step {index} ({reason})" if rejected
                        else f"it was removed at step {index}"
                    )
                    e = InputError(f"{e.message}: {why}", path=e.path, file=e.file)
                raise scenario.input_error(e.at(step.path)) from None
            op = result.op
            if op == "removePod":
                gone[result.pod] = gone[result.pod_uid] = (result.index, False, None)
            elif op == "addPod" and not result.admitted:
                gone[result.pod] = gone[result.pod_uid] = (result.index, True, result.reason)
            else:
                gone.pop(result.pod, None)
                gone.pop(result.pod_uid, None)
            yield result

    def checkpoints(self) -> dict[str, Any]:
        """The checkpoint objects (``cpuManager``, ``memoryManager``) now."""
        return dict(self._node.checkpoint_objects())

    def checkpoint_files(self) -> dict[str, bytes]:
        """The checkpoint files' bytes now, by file name."""
        return dict(self._node.checkpoint_files())

"""The active-pods record and the stale-state collection that relies on it
(``podnuma.cm.active``): a manager whose last collection left its state
clean looks only at the pods that left or lost containers since; the
outcome must be the full walk's."""

from __future__ import annotations

import random

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import parse_quantity
from podnuma.cm.active import ActivePods
from podnuma.cm.container_manager import Node
from podnuma.machine.topology import CPUInfo, CPUTopology, Machine, NUMANode

GB = 1 << 30


def test_the_record_notes_pods_that_shrink_or_leave() -> None:
    active = ActivePods()
    mark = active.mark()
    active["a"] = frozenset({"x"})
    active["a"] = frozenset({"x", "y"})  # grew: nothing can be stale
    assert active.changed_since(mark) == []
    active["a"] = frozenset({"y"})  # lost x
    del active["a"]
    active["b"] = frozenset({"z"})
    assert active.pop("b") == frozenset({"z"})
    assert active.pop("missing", None) is None
    assert active.changed_since(mark) == ["a", "a", "b"]
    assert dict(active) == {}


def test_a_record_too_far_behind_asks_for_a_full_walk() -> None:
    active = ActivePods()
    mark = active.mark()
    for i in range(5000):
        active[f"p{i}"] = frozenset({"c"})
        del active[f"p{i}"]
    assert active.changed_since(mark) is None
    assert active.changed_since(active.mark()) == []


def _machine() -> Machine:
    """2 NUMA nodes x 4 CPUs (2 cores x 2 threads), 4Gi each."""
    cpus = {
        i: CPUInfo(numa_node=i // 4, socket=i // 4, core=i - i % 2, uncore_cache=i // 4)
        for i in range(8)
    }
    topo = CPUTopology(cpus)
    return Machine(topo, (NUMANode(0, 4 * GB, {}), NUMANode(1, 4 * GB, {})), {})


def _pod(uid: str, cpus: int, memory: str, containers: int) -> Pod:
    res = {"cpu": parse_quantity(str(cpus)), "memory": parse_quantity(memory)}
    return Pod(
        uid=uid,
        name=uid,
        containers=tuple(Container(f"c{i}", "app", res, res) for i in range(containers)),
    )


def _stale(node: Node) -> list[tuple[str, str]]:
    """Entries of the CPU and memory managers whose container is not active,
    by a full walk over a plain mapping."""
    active = {uid: set(names) for uid, names in node.active_containers().items()}
    out = [
        (uid, name)
        for uid, entries in node.cpu.state.assignments.items()
        for name in entries
        if name not in active.get(uid, set())
    ]
    return out + node.memory.state.stale_containers(active)


def test_collection_finds_what_a_full_walk_finds() -> None:
    # Random admissions (some rejected after an allocation: the memory
    # request does not fit node allocatable) and removals; after every
    # collection no stale entry may remain.
    config = load_kubelet_config(
        {
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0",
            "topologyManagerPolicy": "best-effort",
            "memoryManagerPolicy": "Static",
            "evictionHard": {"memory.available": "100Mi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
        }
    )
    rng = random.Random(7)
    node = Node(_machine(), config)
    running: list[str] = []
    rejected = admitted = 0
    for i in range(300):
        if running and rng.random() < 0.4:
            node.remove_pod(running.pop(rng.randrange(len(running))), i)
        else:
            memory = rng.choice(["256Mi", "1Gi", "3Gi", "5Gi"])
            pod = _pod(f"p{i}", rng.choice([1, 2, 3]), memory, rng.choice([1, 2]))
            result = node.add_pod(pod, i)
            if result.admitted:
                running.append(pod.uid)
                admitted += 1
            else:
                rejected += 1
        node.cpu.remove_stale_state()
        node.memory.remove_stale_state()
        assert _stale(node) == []
    assert rejected > 0 and admitted > 0


def test_a_watch_is_quiet_only_while_nothing_changed() -> None:
    """``StaleWatch.quiet``: after a collection, true until the active pods
    record a pod that shrank or left, the state's version moves, or another
    mapping or state is asked about."""
    from podnuma.cm.active import StaleWatch

    active = ActivePods()
    active["a"] = frozenset({"x", "y"})
    state = object()
    watch = StaleWatch()
    assert not watch.quiet(active, state, 0)  # never collected
    watch.clean(active, state, 0)
    assert watch.quiet(active, state, 0)
    active["b"] = frozenset({"z"})  # a pod came: nothing can be stale
    assert watch.quiet(active, state, 0)
    assert not watch.quiet(active, state, 1)  # the state changed
    assert not watch.quiet(active, object(), 0)
    assert not watch.quiet(ActivePods(), state, 0)
    active["a"] = frozenset({"x"})  # lost y
    assert not watch.quiet(active, state, 0)
    watch.clean(active, state, 0)
    assert watch.quiet(active, state, 0)
    del active["b"]
    assert not watch.quiet(active, state, 0)
    watch.clean({"a": frozenset({"x"})}, state, 0)  # a plain mapping: never quiet
    assert not watch.quiet(active, state, 0)

"""The active pods, as the resource managers' ``removeStaleState`` reads them.

The kubelet hands its managers ``activePods()``; each of them then walks its
whole state looking for containers that are no longer active. Here the node
keeps the active pods in an :class:`ActivePods` mapping that also records
which pods lost containers or left since some point, so that a manager whose
previous walk left its state clean needs to look at those pods only. The
outcome is the kubelet's: the same entries are found stale and removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from collections.abc import Set as AbstractSet
from typing import Final

from podnuma.buildinfo import mypyc_attr

__all__ = ["ActiveContainers", "ActiveMark", "ActivePods", "StaleWatch", "stale_containers"]

#: pod UID -> names of its active containers (the kubelet's ``activePods()``)
ActiveContainers = Mapping[str, AbstractSet[str]]
# (epoch, position in the log) of an ActivePods
ActiveMark = tuple[int, int]

_LOG_LIMIT: Final = 4096


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class ActivePods(MutableMapping[str, AbstractSet[str]]):
    """Pod UID -> names of the pod's containers, for every active pod.

    A mapping to read. Every change goes through the mapping's own methods,
    which note the pods whose entry shrank or went (the only changes that
    can make a manager's entries stale). The entries live in a plain dict
    (compiled, the mapping's own methods then run natively)."""

    __slots__ = ("_pods", "_log", "_epoch")

    def __init__(self) -> None:
        self._pods: dict[str, AbstractSet[str]] = {}
        self._log: list[str] = []
        self._epoch = 0

    def _note(self, uid: str) -> None:
        log = self._log
        if len(log) >= _LOG_LIMIT:  # watchers that far behind walk everything
            log.clear()
            self._epoch += 1
        log.append(uid)

    # -- reading ---------------------------------------------------------------
    def __getitem__(self, uid: str) -> AbstractSet[str]:
        return self._pods[uid]

    def get(  # type: ignore[override]
        self, uid: str, default: AbstractSet[str] | None = None
    ) -> AbstractSet[str] | None:
        return self._pods.get(uid, default)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __iter__(self) -> Iterator[str]:
        return iter(self._pods)

    def __len__(self) -> int:
        return len(self._pods)

    def __repr__(self) -> str:
        return f"ActivePods({self._pods!r})"

    # -- changes ---------------------------------------------------------------
    def __setitem__(self, uid: str, containers: AbstractSet[str]) -> None:
        pods = self._pods
        old = pods.get(uid)
        pods[uid] = containers
        if old is not None and not old <= containers:
            self._note(uid)

    def __delitem__(self, uid: str) -> None:
        del self._pods[uid]
        self._note(uid)

    def pop(self, uid: str, *default: AbstractSet[str] | None) -> AbstractSet[str] | None:  # type: ignore[override]
        pods = self._pods
        if uid in pods:
            self._note(uid)
            return pods.pop(uid)
        if default:
            return default[0]
        raise KeyError(uid)

    def clear(self) -> None:
        for uid in self._pods:
            self._note(uid)
        self._pods.clear()

    def mark(self) -> ActiveMark:
        """Where the record stands now."""
        return (self._epoch, len(self._log))

    def changed_since(self, mark: ActiveMark) -> list[str] | None:
        """The pods that lost containers or left since ``mark`` (repeats
        possible); ``None`` when the record no longer reaches that far."""
        epoch, position = mark
        if epoch != self._epoch:
            return None
        return self._log[position:]


def stale_containers(
    assignments: Mapping[str, Mapping[str, object]],
    active: ActiveContainers,
    pods: Iterable[str] | None = None,
) -> list[tuple[str, str]]:
    """(pod UID, container name) of every entry of ``assignments`` (pod UID
    -> container name -> assignment) whose container is not in ``active``,
    among the pods ``pods`` (default: all): what ``removeStaleState`` removes."""
    stale: list[tuple[str, str]] = []
    for uid in assignments if pods is None else pods:
        containers = assignments.get(uid)
        if containers is None:
            continue
        alive = active.get(uid)
        if alive is not None and containers.keys() <= alive:
            continue  # the usual case, checked in bulk
        stale += [(uid, name) for name in containers if alive is None or name not in alive]
    return stale


class StaleWatch:
    """What a manager remembers of its last garbage collection: the active
    pods it walked, where their record stood, and its state's version (a
    counter its writers bump whenever they add entries). While all three
    still hold, only the pods recorded since can hold stale entries."""

    __slots__ = ("_active", "_state", "_mark", "_version")

    def __init__(self) -> None:
        self._active: ActivePods | None = None
        self._state: object = None
        self._mark: ActiveMark = (0, 0)
        self._version = -1

    def quiet(self, active: Mapping[str, AbstractSet[str]], state: object, version: int) -> bool:
        """Nothing can have gone stale since the last collection: the same
        active pods, with no pod recorded since, and ``state`` unchanged
        at ``version``. (:meth:`suspects` would then name no pod, and
        :meth:`clean` would record what is recorded already.)"""
        if self._active is not active or self._state is not state or self._version != version:
            return False
        assert isinstance(active, ActivePods)
        epoch, position = self._mark
        return active._epoch == epoch and len(active._log) == position

    def suspects(
        self, active: Mapping[str, AbstractSet[str]], state: object, version: int
    ) -> Iterable[str] | None:
        """The pods to check in ``state`` (at ``version``), or ``None`` when
        every pod must be checked."""
        if self._active is not active or self._state is not state or self._version != version:
            return None
        assert isinstance(active, ActivePods)
        changed = active.changed_since(self._mark)
        if changed is None:
            return None
        return dict.fromkeys(changed) if len(changed) > 1 else changed

    def clean(self, active: Mapping[str, AbstractSet[str]], state: object, version: int) -> None:
        """``state`` (at ``version``) holds no stale entry for ``active`` now."""
        if isinstance(active, ActivePods):
            self._active = active
            self._state = state
            self._mark = active.mark()
            self._version = version
        else:
            self._active = None

    def still_clean(self, before: int, after: int) -> None:
        """The state went from version ``before`` to ``after`` by adding
        entries of active containers only."""
        if self._version == before:
            self._version = after

    def forget(self) -> None:
        self._active = None

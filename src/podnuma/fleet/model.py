"""Plain data the fleet analysis passes around (picklable, no behaviour).

A :class:`NodeSpec` is everything needed to replay one node: its name and
labels, its kubelet configuration document, its machine as a node form (the
scenario contract's ``node`` mapping), and where its pods are. Issues found
while reading the inputs or replaying a node are :class:`Issue` records,
reported per node and never fatal to the other nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Issue", "NodeSpec", "Severity"]

Severity = Literal["error", "warning", "info"]


class Issue:
    """A problem with the inputs of one node (``node``) or of the fleet.

    ``error``: the node could not be replayed (no topology, a configuration
    the kubelet would refuse...). ``warning``: it was replayed, with caveats
    (a pod that cannot be parsed, a truncated dump...). ``info``: what was
    assumed (e.g. the CPU numbering of a NodeResourceTopology).
    """

    __slots__ = ("severity", "message", "node", "file", "path")

    severity: Severity
    message: str
    node: str | None
    file: str | None
    path: str

    def __init__(
        self, severity: Severity, message: str, node: str | None = None, file: str | None = None,
        path: str = "",
    ) -> None:
    # written out, with the comparison, the hash and the repr (a frozen
    # ``dataclass`` would make them when the module is imported, on every
    # ``fleet`` command's start); not frozen at run time
        self.severity = severity
        self.message = message
        self.node = node
        self.file = file
        self.path = path

    def _fields(self) -> tuple[str, str, str | None, str | None, str]:
        return (self.severity, self.message, self.node, self.file, self.path)

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(severity={self.severity!r}, message={self.message!r}, "
                f"node={self.node!r}, file={self.file!r}, path={self.path!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Issue)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def text(self) -> str:
        where = ": ".join(p for p in (self.file, self.path) if p)
        node = f"node {self.node}: " if self.node else ""
        return f"{self.severity}: {node}{where + ': ' if where else ''}{self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "node": self.node,
            "file": self.file,
            "path": self.path or None,
            "message": self.message,
        }


@dataclass(frozen=True)
class NodeSpec:
    """One node's inputs.

    ``config`` is a KubeletConfiguration document (``None``: the kubelet's
    defaults, assumed: the node is then reported apart from the totals); ``topology`` a node form (``None``: unknown, the node cannot
    be replayed). Pods are either inline (``pods``, compact manifests) or in
    ``pod_files`` (read by whoever replays the node, filtered on
    ``spec.nodeName``).
    """

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    allocatable: Mapping[str, str] = field(default_factory=dict)
    #: the Node's ``status.capacity`` (checked against an assumed configuration)
    capacity: Mapping[str, str] = field(default_factory=dict)
    #: the NodeResourceTopology's ``attributes`` (name -> value), e.g. the
    #: exporter's ``topologyManagerPolicy`` and ``topologyManagerScope``
    nrt_attributes: Mapping[str, str] = field(default_factory=dict)
    config: Mapping[str, Any] | None = None
    config_source: str = "kubelet defaults"
    topology: Mapping[str, Any] | None = None
    topology_source: str = ""
    pod_files: tuple[str, ...] = ()
    pods: tuple[Mapping[str, Any], ...] | None = None
    issues: tuple[Issue, ...] = ()
    #: ``(file, start, end)`` byte ranges of pod dumps holding this node's
    #: pods (read by whoever replays it), and how many pods the dumps bind
    #: to it (partitions are sized by it)
    pod_ranges: tuple[tuple[str, int, int], ...] = ()
    pods_bound: int = 0
    #: pods of this node found again in a later dump (same namespace, name
    #: and uid): the replay compares their copies
    pods_dumped_again: int = 0
    #: pods of this node a dump lists twice itself (same namespace, name and
    #: uid: a damaged dump), and the ``(file, start, end)`` byte ranges of
    #: the later copies in indexed dumps: the replay compares their copies
    pods_listed_again: int = 0
    pod_repeats: tuple[tuple[str, int, int], ...] = ()
